"""Sharded campaigns (issue 14 point 2): the split of a campaign's examples into shards is a partition, the
schedules a shard draws are the unsharded campaign's, and a failure saved in the example database is replayed
first by the next run. No Spark: the campaign's own Hypothesis block tests are run with a recording body."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase, InMemoryExampleDatabase

from harness.chaos.database import DatabaseError, campaign_key, describe_database, open_database, saved_failures
from harness.chaos.profiles import get_profile
from harness.chaos.seeded import block_test
from harness.chaos.shards import BLOCK_EXAMPLES, Block, Shard, campaign_blocks, idle_shard_message, shard_blocks
from harness.chaos.strategies import chaos_specs
from harness.engine.spec import RunSpec
from scenarios import get_scenario

CI = get_profile("ci")


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(st.integers(0, 2**31 - 1), st.integers(1, 300), st.integers(1, 40))
def test_the_shards_partition_the_campaigns_blocks(seed: int, examples: int, count: int) -> None:
    whole = campaign_blocks(seed, examples)
    parts = [shard_blocks(seed, examples, Shard(i, count)) for i in range(1, count + 1)]
    union = sorted((b for part in parts for b in part), key=lambda b: b.index)
    assert union == whole  # every block once: no shard repeats another's, none is left out
    assert sum(len(p) for p in parts) == len(whole)
    assert sum(b.examples for b in whole) == examples and all(1 <= b.examples <= BLOCK_EXAMPLES for b in whole)
    assert whole[0].seed == seed  # a campaign of <= 10 examples is the plain Hypothesis run of its seed
    assert len({b.seed for b in whole}) == len(whole)
    assert shard_blocks(seed, examples, None) == whole
    sizes = [len(p) for p in parts]
    assert max(sizes) - min(sizes) <= 1  # shards differ by at most one block


def test_a_shard_is_parsed_strictly_and_an_idle_shard_says_what_to_give() -> None:
    assert Shard.parse("2/4") == Shard(2, 4) and str(Shard(2, 4)) == "2/4"
    for bad in ("0/2", "3/2", "a/b", "1-2", "1/0", "1/2/3"):
        with pytest.raises(ValueError, match="I/N"):
            Shard.parse(bad)
    assert shard_blocks(1, 10, Shard(2, 2)) == []
    assert "give --examples 20 or more for 2 shards" in idle_shard_message(10, Shard(2, 2))


def _drawn(blocks: list[Block], database: object = None) -> list[RunSpec]:
    """The schedules the campaign's block tests draw for ``blocks`` (none fails: the body only records)."""
    scenario = get_scenario("file_sink_stateless")
    strategy = chaos_specs(scenario, max_rounds=CI.max_rounds, max_faults=CI.max_faults,
                           hard_kill_ratio=CI.hard_kill_ratio, ref=scenario.name)  # fmt: skip
    drawn: list[RunSpec] = []

    def record(spec: RunSpec) -> None:
        drawn.append(spec)

    for block in blocks:
        block_test(strategy, record, block, database, b"k")()  # type: ignore[arg-type]
    return drawn


def test_the_shards_draw_exactly_the_unsharded_campaigns_schedules() -> None:
    whole = _drawn(campaign_blocks(7, 25))
    shards = [_drawn(shard_blocks(7, 25, Shard(i, 2))) for i in (1, 2)]
    assert len(whole) >= 25
    assert sorted(s.to_json() for s in shards[0] + shards[1]) == sorted(s.to_json() for s in whole)
    assert not {s.to_json() for s in shards[0]} >= {s.to_json() for s in shards[1]}  # the halves differ
    # ... and with an (empty) example database, which only adds the saved failures in front
    assert _drawn(shard_blocks(7, 25, Shard(1, 2)), InMemoryExampleDatabase()) == shards[0]


def _failing_block(database: object, seed: int, seen: list[int]) -> bool:
    """A block whose property fails for x >= 50; whether it failed."""

    def play(x: int) -> None:
        seen.append(x)
        assert x < 50

    try:
        block_test(st.integers(0, 100), play, Block(0, seed, 10), database, b"harness-test")()  # type: ignore[arg-type]
    except AssertionError:
        return True
    return False


def replays_first(database: object) -> None:
    """One block finds and shrinks a failure; a later block with another seed (another shard, a rerun) runs the
    saved failure as its first example."""
    first: list[int] = []
    assert _failing_block(database, 1, first)
    assert saved_failures(database, b"harness-test") == 1  # type: ignore[arg-type]
    again: list[int] = []
    assert _failing_block(database, 2, again)
    assert again[0] == 50, again[:5]  # the shrunk failure, replayed before anything is generated
    fresh: list[int] = []
    assert _failing_block(None, 2, fresh) and fresh[0] != 50  # without the database the seed alone decides


def test_database_replays_first(tmp_path: Path) -> None:
    replays_first(open_database(tmp_path / "db"))
    assert isinstance(open_database(tmp_path / "db"), DirectoryBasedExampleDatabase)


def test_a_database_that_names_nothing_usable_is_refused_with_what_to_give(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(DatabaseError, match="is a file; give a directory"):
        open_database(tmp_path / "file")
    with pytest.raises(DatabaseError, match="cannot import it"):
        open_database("no_such_module_xyz:DB")
    with pytest.raises(DatabaseError, match="not a Hypothesis ExampleDatabase"):
        open_database("harness.chaos.shards:BLOCK_EXAMPLES")
    with pytest.raises(DatabaseError, match="cannot call it without arguments"):
        open_database("hypothesis.database:GitHubArtifactDatabase")
    with pytest.raises(DatabaseError, match="cannot import it"):
        open_database(":X")
    with pytest.raises(DatabaseError, match="not a Redis URL"):
        open_database("redis://h:abc/0")
    assert isinstance(open_database("hypothesis.database:InMemoryExampleDatabase"), InMemoryExampleDatabase)
    assert describe_database("redis://user:secret@host:6379/0") == "redis://***@host:6379/0"


def test_every_shard_and_seed_of_a_campaign_shares_one_key_and_other_campaigns_do_not() -> None:
    key = campaign_key("file_sink_stateless", CI, (), "local[2]")
    assert key == campaign_key("file_sink_stateless", CI.with_examples(40), (), "local[2]")
    others = {
        campaign_key("foreachbatch_append_naive", CI, (), "local[2]"),
        campaign_key("file_sink_stateless", CI.with_volume(100_000), (), "local[2]"),
        campaign_key("file_sink_stateless", CI, ("truncate_log",), "local[2]"),
        campaign_key("file_sink_stateless", get_profile("nightly"), (), "local[2]"),
        campaign_key("file_sink_stateless", CI, (), "local[2]", steps=True),
    }
    assert key not in others and len(others) == 5
    # the strategy samples nemesis actions in the order given: another order is another campaign
    ab = campaign_key("file_sink_stateless", CI, ("truncate_latest_offsets", "empty_latest_commit"), "local[2]")
    assert ab != campaign_key("file_sink_stateless", CI, ("empty_latest_commit", "truncate_latest_offsets"), "local[2]")
