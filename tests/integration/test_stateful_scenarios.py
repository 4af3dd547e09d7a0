"""The stateful scenarios: oracles against hand-computed answers, and real kill/restart runs.

Oracle tests run in this process on the session ``spark`` fixture with a
small fixed input whose expected output is written out by hand (window
boundaries, the watermark's ``<=``, dedup collisions across slots, the join's
inclusive ±5 s range). The CLI runs start the harness the way a user does:
2 seeded SIGKILLs and 2 rounds per scenario; the run must end exactly-once,
with both kills fired and a non-trivial expected output. The naive
additive-merge sink must be flagged after a ``sink.commit.after`` kill.

Cost: each CLI run starts 3 drivers (JVM + cold Python workers, 15-30 s each
on a busy 2-core machine).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
import pytest

from scenarios import get_scenario
from scenarios.base import OracleContext
from scenarios.rowgen import SCHEMA_DDL
from tests.integration.clirun import harness_json, leftover_processes

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

T0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)  # a multiple of 10 s


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def expected_of(spark: SparkSession, name: str, rows: list[tuple], checkpoint: str = "") -> set[tuple]:
    """The scenario's oracle over ``rows`` (``SCHEMA_DDL`` tuples), as a set of value tuples."""
    df = spark.createDataFrame(rows, SCHEMA_DDL)
    out = get_scenario(name).expected(df, OracleContext(spark, 0, checkpoint)).toArrow().to_pylist()
    assert len(out) == len({tuple(r.values()) for r in out}), "an oracle row appears twice"
    return {tuple(r.values()) for r in out}


def offset_log(root: Path, ends: list[int], committed: int | None = None) -> str:
    """A checkpoint whose batch ``i`` read partition 0 up to ``ends[i]``; the first ``committed`` are committed."""
    from harness.inspector.synth import commit_text, offsets_text, write_with_crc

    for bid, end in enumerate(ends):
        write_with_crc(root / "offsets" / str(bid), offsets_text([{"0": end}], 0, 0))
        if committed is None or bid < committed:
            write_with_crc(root / "commits" / str(bid), commit_text(0))
    return str(root)


AGG_INPUT = [
    (0, 0, 0, 1, 10, at(1)),
    (0, 1, 0, 1, 20, at(9.999)),  # still window [0, 10)
    (0, 2, 0, 2, 5, at(3)),
    (0, 3, 0, 1, 7, at(15)),
    (0, 4, 0, 1, 1, at(25)),
    (0, 5, 0, 2, 4, at(31)),
]
W0 = {(at(0), at(10), 1, 2, 30), (at(0), at(10), 2, 1, 5)}
W10 = {(at(10), at(20), 1, 1, 7)}
AGG_ALL = W0 | W10 | {(at(20), at(30), 1, 1, 1), (at(30), at(40), 2, 1, 4)}


@pytest.mark.parametrize(
    ("ends", "committed", "closed"),
    [
        ([6], None, set()),  # one batch: no earlier batch, no watermark
        ([3, 6], None, set()),  # watermark 9.999 - 5 s
        ([4, 6], None, W0),  # watermark 15 - 5 = 10 = end of [0, 10): closed (<=)
        ([5, 6], None, W0 | W10),  # watermark 25 - 5 = 20
        ([4, 5, 6], 2, W0),  # the uncommitted batch 2 does not count
        ([4, 6, 6], None, W0 | W10),  # a trailing no-data batch: all input before it, watermark 26
    ],
)
def test_append_oracle_keeps_the_windows_the_last_batch_closed(
    spark: SparkSession, tmp_path: Path, ends: list[int], committed: int | None, closed: set[tuple]
) -> None:
    assert expected_of(spark, "agg_watermark_append", AGG_INPUT, offset_log(tmp_path, ends, committed)) == closed


@pytest.mark.parametrize("name", ["agg_watermark_update", "agg_update_naive"])
def test_update_oracles_hold_the_final_aggregate_of_every_window(spark: SparkSession, name: str) -> None:
    assert expected_of(spark, name, AGG_INPUT) == AGG_ALL


DEDUP_INPUT = [
    (0, 0, 0, 1, 3, at(1)),  # key 1, bucket 0, slot 0
    (0, 0, 1, 1, 6, at(8)),  # duplicate of the row above
    (0, 1, 0, 1, 4, at(2)),  # bucket 1
    (0, 2, 0, 1, 9, at(12)),  # bucket 0 again, but slot 10
    (0, 3, 0, 2, 3, at(1)),  # key 2
    (0, 4, 0, 1, 0, at(9)),  # duplicate of the first row, other offset
]


@pytest.mark.parametrize("name", ["dedup_stream", "dedup_within_watermark"])
def test_dedup_oracles_keep_each_dedup_key_once(spark: SparkSession, name: str) -> None:
    assert expected_of(spark, name, DEDUP_INPUT) == {(1, 0, at(0)), (1, 1, at(0)), (1, 0, at(10)), (2, 0, at(0))}


def test_join_oracle_pairs_partition_0_with_partition_1_within_5_seconds(spark: SparkSession) -> None:
    rows = [
        (0, 0, 0, 1, 100, at(10)),  # left a
        (0, 1, 0, 2, 200, at(20)),  # left b
        (1, 0, 0, 1, 1, at(15)),  # right: a + 5 s, inclusive
        (1, 1, 0, 1, 2, at(16)),  # a + 6 s: no
        (1, 2, 0, 1, 3, at(5)),  # a - 5 s, inclusive
        (1, 3, 0, 2, 4, at(20)),  # b
        (1, 4, 0, 3, 5, at(10)),  # no left row with key 3
        (0, 2, 0, 4, 6, at(10)),  # left without a right row
    ]
    assert expected_of(spark, "stream_stream_join", rows) == {
        (1, 0, 0, 0, 0, at(10), at(15), 100, 1),
        (1, 0, 0, 2, 0, at(10), at(5), 100, 3),
        (2, 1, 0, 3, 0, at(20), at(20), 200, 4),
    }


def test_a_replayed_batch_is_skipped_for_the_sink_but_still_computed_for_state(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Why ``upsert_by_group`` runs a replayed batch's plan: a ``foreachBatch`` that
    returns early on a known batch id stops a stateful query on Spark 4
    (STATE_STORE_COMMIT_VALIDATION_FAILED) on every restart."""
    from pyspark.errors import StreamingQueryException

    from scenarios.library.agg_watermark_append import aggregate
    from scenarios.library.agg_watermark_update import read_table, upsert_by_group
    from scenarios.replayable_source import FORMAT

    sc = get_scenario("agg_watermark_update")
    opts = {**sc.source_config(7).to_options(), "end": '{"0": 12}'}
    db, ckpt = tmp_path / "sink.sqlite3", str(tmp_path / "ckpt")
    upsert = upsert_by_group(db, sc.identity)

    def run(fn: Any) -> None:
        stream = spark.readStream.format(FORMAT).options(**opts).load()
        writer = aggregate(stream).writeStream.outputMode("update").foreachBatch(fn)
        writer.option("checkpointLocation", ckpt).trigger(availableNow=True).start().awaitTermination()

    def crash_after_commit(df: Any, batch_id: int) -> None:  # the driver "dies" before Spark logs commits/0
        upsert(df, batch_id)
        raise RuntimeError("crash after the sink committed")

    with pytest.raises(StreamingQueryException, match="crash after the sink committed"):
        run(crash_after_commit)
    with pytest.raises(StreamingQueryException, match="XXKST") as failed:
        run(lambda df, batch_id: None)  # "batch 0 is in the ledger: nothing to do"
    assert "STATE_STORE_COMMIT_VALIDATION_FAILED" in failed.value._stackTrace  # the JVM trace names the cause
    run(upsert)  # skips the write, computes the batch: the query recovers
    batch = spark.read.format(FORMAT).options(**opts).load()
    expected = {tuple(r.values()) for r in aggregate(batch).toArrow().to_pylist()}
    assert {tuple(r.values()) for r in read_table(db)} == expected


# -- real runs through the CLI ----------------------------------------------------------------------------------------
@pytest.fixture
def no_leftover_processes() -> Any:
    yield
    assert leftover_processes() == [], "a harness run left processes behind"


def run_cli(tmp_path: Path, name: str, *args: str) -> tuple[int, dict[str, Any], str, Path]:
    run_dir = tmp_path / "run"
    rc, doc, log = harness_json(tmp_path / "r.json", "run", name, "--rounds", "2", "--run-dir", str(run_dir), *args)
    return rc, doc, log, run_dir


#: Seeds whose two kills both fall in round 2 (state from round 1 in place) and mostly inside a batch; for the
#: update sink, one after the sink committed a batch (the replay must be skipped for the sink but computed).
EXACT = {
    "agg_watermark_append": 1,  # sink.write.start@3, sink.write.mid@5
    "agg_watermark_update": 1,  # sink.commit.after@3 (the no-data batch closing round 1), after_commit_logged@6
    "dedup_stream": 8,  # sink.write.mid@1, source.read@4
    "dedup_within_watermark": 6,  # sink.write.end@5, after_offsets_logged@6
    "stream_stream_join": 12,  # sink.write.end@4, sink.write.mid@5 (partition 0)
}


#: Run by the heavy tier only. The default suite's ci campaigns (test_chaos_library.py) kill every stateful scenario
#: with drawn faults (a fifth of them SIGKILLs), and its representatives of stateful queries under seeded SIGKILLs
#: are test_volume.py's 40-batch deduplication (four kills, at maintenance boundaries) and test_tws_sessions.py's
#: transformWithState runs (a kill after the foreachBatch sink committed, agg_watermark_update's case here).
HEAVY_ONLY = set(EXACT)


@pytest.mark.usefixtures("no_leftover_processes")
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.heavy) if n in HEAVY_ONLY else n for n in sorted(EXACT)]
)
def test_stateful_scenario_stays_exactly_once_under_seeded_kills(tmp_path: Path, name: str) -> None:
    rc, doc, log, run_dir = run_cli(tmp_path, name, "--seed", str(EXACT[name]), "--kills", "2")
    assert rc == 0, log
    assert doc["verdict"] == "exactly-once", log
    assert sorted(k["id"] for k in doc["kills_fired"]) == ["k1", "k2"], log
    assert doc["expected_rows"] > 0 and doc["expected_rows"] == doc["observed_rows"]
    if name == "agg_watermark_append":
        windows = {r["window_start"] for r in pq.read_table(run_dir / "oracle" / "expected.parquet").to_pylist()}
        assert len(windows) >= 2, f"only {len(windows)} window(s) closed: the run proves little"


@pytest.mark.heavy  # the default suite's broken stateful subject caught after this kill: test_tws_sessions.py's twin
@pytest.mark.usefixtures("no_leftover_processes")
def test_additive_merge_sink_is_caught_after_a_kill_past_its_commit(tmp_path: Path) -> None:
    kill = ("--kills", "0", "--kill", "sink.commit.after:1")
    rc, doc, log, _ = run_cli(tmp_path, "agg_update_naive", "--seed", "5", *kill)
    assert rc == 1, log
    assert doc["verdict"] == "violated"
    [fired] = doc["kills_fired"]
    assert (fired["point"], fired["batch"]) == ("sink.commit.after", 1)
    # Every group of the replayed batch is off by that batch's own rows: one wrong-value anomaly per group
    # (the expected row and, for the same group, the larger count readers see), nothing else.
    group = get_scenario("agg_update_naive").identity
    wrong = [a for a in doc["anomalies"] if a["kind"] == "wrong-value"]
    assert wrong and len(wrong) == len(doc["anomalies"]), log
    assert all(tuple(a["row"][c] for c in group) == tuple(a["observed_row"][c] for c in group) for a in wrong)
    assert all(a["observed_row"]["rows"] > a["row"]["rows"] for a in wrong), log
