"""The stateful scenarios' design assumptions and sinks, checked without Spark.

- No input row is ever behind the watermark, for *any* schedule (rounds and
  rows per partition drawn by Hypothesis, as the chaos engine does): the
  batch oracles assume it, since which late rows Spark drops depends on batch
  boundaries. Modelled conservatively: the watermark before a batch is the
  newest event time of *all* earlier batches minus the delay (Spark's is at
  most that); for the join, the minimum over the two sides that have data.
- ``dropDuplicatesWithinWatermark``'s guarantee precondition: all rows of one
  dedup key lie within less than the watermark delay.
- The SQLite sinks: the group upsert keeps the last value and skips a replayed
  batch id; the additive merge double-counts a replay (the bug the naive
  scenario exists to show).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql.types import IntegerType, LongType, StructField, StructType, TimestampType

from fault_injectors.plan import CRASH_POINTS
from scenarios import presets
from scenarios.admission import plan_batches
from scenarios.base import Scenario
from scenarios.library import agg_update_naive as naive
from scenarios.library import agg_watermark_append, agg_watermark_update, dedup_stream, dedup_within_watermark
from scenarios.library import stream_stream_join as ssj
from scenarios.sinks.sqlite_upsert import connect

SLOT_MS = 10_000
STATEFUL = (
    agg_watermark_append.SCENARIO,
    agg_watermark_update.SCENARIO,
    dedup_stream.SCENARIO,
    dedup_within_watermark.SCENARIO,
    ssj.SCENARIO,
    naive.SCENARIO,
)


def ms(t: datetime) -> int:
    return round(t.timestamp() * 1000)


def batches_of(sc: Scenario, rounds: list[list[int]]) -> list[tuple[dict[int, int], dict[int, int]]]:
    """Fault-free ``(start, end)`` per data batch when ``rounds[r][p]`` offsets are added per round."""
    available = {p: 0 for p in range(sc.partitions)}
    out = []
    for added in rounds:
        start = dict(available)
        available = {p: available[p] + added[p] for p in available}
        out += plan_batches(start, available, sc.max_offsets_per_batch)
    return out


def late_rows(sc: Scenario, seed: int, rounds: list[list[int]], delay_ms: int, column: str, per_side: bool) -> list:
    """Rows whose watermark ``column`` (``event_time`` or its 10-s ``slot``) is at or
    behind the (over-estimated) watermark of the batch that reads them."""
    cfg = sc.source_config(seed)
    newest: dict[int, int] = {}  # side (partition, or 0 for one watermark) -> newest value so far
    late = []
    for start, end in batches_of(sc, rounds):
        batch_max: dict[int, int] = {}
        wm = min(newest.values()) - delay_ms if newest else None
        for p in range(sc.partitions):
            for row in cfg.rows(p, start[p], end[p]):
                t = ms(row[5])
                value = t - t % SLOT_MS if column == "slot" else t
                if wm is not None and value <= wm:
                    late.append((row, wm))
                side = p if per_side else 0
                batch_max[side] = max(batch_max.get(side, value), value)
        for side, v in batch_max.items():
            newest[side] = max(newest.get(side, v), v)
    return late


rounds_1p = st.lists(st.lists(st.integers(1, 60), min_size=1, max_size=1), min_size=1, max_size=3)
rounds_2p = st.lists(st.lists(st.integers(1, 60), min_size=2, max_size=2), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**16), rounds=rounds_1p)
def test_no_row_is_ever_behind_the_watermark_single_partition(seed: int, rounds: list[list[int]]) -> None:
    cases = [
        (agg_watermark_append.SCENARIO, 5_000, "event_time"),
        (agg_watermark_update.SCENARIO, 5_000, "event_time"),
        (dedup_stream.SCENARIO, 20_000, "slot"),
        (dedup_within_watermark.SCENARIO, 15_000, "event_time"),
    ]
    for sc, delay, column in cases:
        assert late_rows(sc, seed, rounds, delay, column, per_side=False) == [], sc.name


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**16), rounds=rounds_2p)
def test_no_join_row_is_ever_behind_the_min_watermark(seed: int, rounds: list[list[int]]) -> None:
    assert late_rows(ssj.SCENARIO, seed, rounds, 10_000, "event_time", per_side=True) == []


def test_the_model_does_see_late_rows_under_one_watermark_over_uneven_partitions() -> None:
    """Why the aggregation uses one partition: two partitions advancing unevenly
    under a single watermark would put rows behind it (the model must catch that)."""
    two = Scenario(**{**agg_watermark_append.SCENARIO.__dict__, "partitions": 2})
    assert late_rows(two, 1, [[60, 5], [5, 60]], 5_000, "event_time", per_side=False)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 200))
def test_rows_of_one_dedup_key_lie_within_the_within_watermark_delay(seed: int, n: int) -> None:
    cfg = dedup_within_watermark.SCENARIO.source_config(seed)
    times: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for row in cfg.rows(0, 0, n):
        t = ms(row[5])
        times[(row[3], row[4] % dedup_stream.BUCKETS, t - t % SLOT_MS)].append(t)
    assert max(max(v) - min(v) for v in times.values()) < 15_000


FILE_SINK = (agg_watermark_append.SCENARIO, dedup_stream.SCENARIO, dedup_within_watermark.SCENARIO, ssj.SCENARIO)
IN_DATA_BATCHES_ONLY = {"after_offsets_logged", "source.read", "sink.write.start", "sink.write.mid", "sink.write.end"}


def test_every_planned_point_can_fire_with_either_action_in_every_batch() -> None:
    """The chaos engine plans kills *and* raised exceptions at predicted batch ids."""
    no_data_off = {"spark.sql.streaming.noDataMicroBatches.enabled": "false"}
    for sc in STATEFUL:
        assert set(sc.kill_points) <= set(CRASH_POINTS), sc.name
        assert sc.guarantee == ("at-least-once" if sc is naive.SCENARIO else "exactly-once")
    for sc in FILE_SINK:
        # Only data batches (the ones the schedule predicts), each reaching every source hook; the file
        # sink's commit point is reached by the checkpoint watcher alone, which cannot raise.
        assert dict(sc.confs) == no_data_off, sc.name
        assert set(sc.kill_points) == set(presets.READ_POINTS), sc.name
    # No-data batches on: no source method runs inside them, foreachBatch does.
    update = agg_watermark_update.SCENARIO
    assert not update.confs and not set(update.kill_points) & IN_DATA_BATCHES_ONLY
    assert {"sink.commit.before", "sink.commit.after"} <= set(update.kill_points)


# -- SQLite sinks ------------------------------------------------------------------------------------------------------
SCHEMA = StructType(
    [
        StructField("window_start", TimestampType()),
        StructField("window_end", TimestampType()),
        StructField("key", IntegerType()),
        StructField("rows", LongType()),
        StructField("value_sum", LongType()),
    ]
)
W0 = datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
W1 = W0 + timedelta(seconds=10)


def agg_row(start: datetime, key: int, rows: int, total: int) -> tuple:
    return (start, start + timedelta(seconds=10), key, rows, total)


def stored(db: Path) -> list[tuple]:
    return sorted(tuple(r.values()) for r in agg_watermark_update.read_table(db))


def test_group_upsert_keeps_the_last_value_and_skips_a_replayed_batch(tmp_path: Path) -> None:
    db, keys = tmp_path / "s.sqlite3", agg_watermark_append.GROUP
    assert agg_watermark_update.read_table(db) == []
    conn = connect(db)
    try:
        assert agg_watermark_update.upsert_batch(conn, SCHEMA, keys, [agg_row(W0, 1, 2, 10)], 0)
        batch1 = [agg_row(W0, 1, 3, 15), agg_row(W1, 1, 1, 7)]
        assert agg_watermark_update.upsert_batch(conn, SCHEMA, keys, batch1, 1)
        assert not agg_watermark_update.upsert_batch(conn, SCHEMA, keys, [agg_row(W0, 1, 99, 99)], 1)  # replay
    finally:
        conn.close()
    assert stored(db) == [agg_row(W0, 1, 3, 15), agg_row(W1, 1, 1, 7)]


def test_group_upsert_rolls_back_a_batch_that_fails_midway(tmp_path: Path) -> None:
    db, keys = tmp_path / "s.sqlite3", agg_watermark_append.GROUP

    def failing():
        yield agg_row(W1, 2, 1, 1)
        raise RuntimeError("killed mid-batch")

    conn = connect(db)
    try:
        agg_watermark_update.upsert_batch(conn, SCHEMA, keys, [agg_row(W0, 2, 1, 5)], 0)
        try:
            agg_watermark_update.upsert_batch(conn, SCHEMA, keys, failing(), 1)
        except RuntimeError:
            pass
        assert agg_watermark_update.upsert_batch(conn, SCHEMA, keys, [agg_row(W0, 2, 4, 9)], 1)  # the retry applies
    finally:
        conn.close()
    assert stored(db) == [agg_row(W0, 2, 4, 9)]


def test_additive_merge_double_counts_a_replayed_batch(tmp_path: Path) -> None:
    db, keys = tmp_path / "s.sqlite3", agg_watermark_append.GROUP
    conn = connect(db)
    try:
        naive.merge_additively(conn, SCHEMA, keys, [agg_row(W0, 3, 2, 10)], ("rows", "value_sum"))
        batch1 = [agg_row(W0, 3, 1, 5), agg_row(W1, 3, 1, 1)]
        naive.merge_additively(conn, SCHEMA, keys, batch1, ("rows", "value_sum"))
        assert stored(db) == [agg_row(W0, 3, 3, 15), agg_row(W1, 3, 1, 1)]  # fault-free: exact
        naive.merge_additively(conn, SCHEMA, keys, batch1, ("rows", "value_sum"))  # Spark replays batch 1
    finally:
        conn.close()
    assert stored(db) == [agg_row(W0, 3, 4, 20), agg_row(W1, 3, 2, 2)]
