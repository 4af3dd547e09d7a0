"""harness/engine/roundcheck.py and ``KafkaTopic.unread``: a job round whose query ended short of the records the
harness published for it is the harness's miss (no verdict naming the offsets), never rows the pipeline lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.engine.roundcheck import InputUnread, check_round_read
from scenarios.kafka import KafkaTopic, client
from scenarios.rowgen import SourceConfig
from scenarios.sources import SourceRun
from scenarios.tap import write_tap

META = '{"batchWatermarkMs":0,"batchTimestampMs":1795357159502,"conf":{}}'
TOPIC = "harness-t"


def _batch(checkpoint: Path, batch: int, offset: str, committed: bool = True) -> None:
    (checkpoint / "offsets").mkdir(parents=True, exist_ok=True)
    (checkpoint / "commits").mkdir(parents=True, exist_ok=True)
    (checkpoint / "offsets" / str(batch)).write_text(f"v1\n{META}\n{offset}")
    if committed:
        (checkpoint / "commits" / str(batch)).write_text('v1\n{"nextBatchWatermarkMs":0}')


def test_a_round_that_read_everything_passes(tmp_path: Path) -> None:
    _batch(tmp_path, 0, '{"harness-t":{"0":5}}')
    seen: list[Any] = []
    check_round_read(tmp_path, lambda sources: seen.append(sources) or "")
    assert seen == [({TOPIC: {"0": 5}},)]


def test_the_newest_committed_batch_is_judged_and_named(tmp_path: Path) -> None:
    _batch(tmp_path, 0, '{"harness-t":{"0":5}}')
    _batch(tmp_path, 1, '{"harness-t":{"0":9}}')
    _batch(tmp_path, 2, '{"harness-t":{"0":12}}', committed=False)  # planned, never committed
    with pytest.raises(InputUnread) as err:
        check_round_read(
            tmp_path, lambda sources: "" if sources[0][TOPIC]["0"] >= 12 else "partition 0 at offset 9 of 12"
        )
    assert "ended at batch 1 " in str(err.value) and "partition 0 at offset 9 of 12" in str(err.value)
    assert "no verdict" in str(err.value)


def test_a_query_that_committed_nothing_is_asked_with_no_offset(tmp_path: Path) -> None:
    with pytest.raises(InputUnread, match="committed no batch"):
        check_round_read(tmp_path, lambda sources: "" if sources is not None else "partition 0 at offset 0 of 4")


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SourceRun:
    """A run whose tap made 10 records of partition 0 and 4 of partition 1 available; the topic holds 11 in
    partition 0 (one more, produced and acknowledged) and 4 in partition 1."""
    tap = tmp_path / "tap.json"
    write_tap(tap, {0: 10, 1: 4})
    monkeypatch.setattr(KafkaTopic, "where", lambda self, run: ("127.0.0.1:1", TOPIC))
    monkeypatch.setattr(client, "end_offsets", lambda bootstrap, topic: {0: 11, 1: 4})
    return SourceRun(SourceConfig(seed=1), str(tap), "", "", "", None, False)


def test_kafka_names_each_partition_short_of_the_topic_and_the_tap(run: SourceRun) -> None:
    source = KafkaTopic()
    assert source.unread([{TOPIC: {"0": 11, "1": 4}}], run) == ""
    assert source.unread([{TOPIC: {"0": 10, "1": 4}}], run) == f"topic {TOPIC}: partition 0 at offset 10 of 11"
    assert source.unread(None, run) == f"topic {TOPIC}: partition 0 at offset 0 of 11, partition 1 at offset 0 of 4"
    assert source.caught_up({TOPIC: {"0": 11, "1": 4}}, run) and not source.caught_up(None, run)


def test_the_topics_entry_is_found_among_the_sources_and_none_naming_it_reached_nothing(run: SourceRun) -> None:
    source = KafkaTopic()
    assert source.unread([{"0": 3}, {TOPIC: {"0": 11, "1": 4}}], run) == ""  # a second source of the query
    assert source.unread([{"other-topic": {"0": 3}}], run).startswith(f"topic {TOPIC}: partition 0 at offset 0 of")
    assert not source.caught_up({"other-topic": {"0": 3}}, run)
