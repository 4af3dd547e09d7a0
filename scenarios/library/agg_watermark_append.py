"""Windowed aggregation with a watermark, append mode, into the parquet file sink.

Purpose: the canonical stateful pipeline. ``withWatermark("event_time", 5 s)``,
10-second tumbling windows per ``key``, ``count`` and ``sum(value)``; in
append mode a window's row is written once, by the batch whose watermark
closes it (``window.end <= watermark``).
Faults: SIGKILL of the driver's process groups while the next batch is planned
(``source.latest_offset``), after ``offsets/N`` is logged, in the middle of
batch N (``source.read``, ``sink.write.start|mid|end``: in a stateful query
these fire in the source's read tasks, the stage before the shuffle, so no
state of batch N is committed yet) and after ``commits/N``. On restart Spark
reloads state version N and re-runs batch N with the watermark logged in
``offsets/N``.
Guarantee checked: exactly-once: every closed window's row is visible exactly
once, with the aggregate of exactly the input rows of that window and key.
Pass condition: the rows readable through the sink equal, as a multiset, the
same aggregation in batch mode over exactly the input added, restricted to the
windows closed by the watermark of the run's last batch, computed from the
input and the offset log alone (see :func:`closed_windows`).
Requirements: none. No-data batches are off
(``spark.sql.streaming.noDataMicroBatches.enabled=false``): Spark would add a
batch without input after each run to advance the watermark, which the
harness's schedules (kills at predicted batch ids) do not predict and in which
no source hook runs (a soft fault there could never fire); windows then close
when later data arrives. ``agg_watermark_update`` keeps them on. The source
has one partition and event-time jitter (``disorder_ms``) below the delay, so
no row is ever behind the watermark: Spark drops such rows, and which ones
depends on batch boundaries. With two partitions advancing unevenly under one
watermark that would happen, hence one partition.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from harness.inspector.checkpoint import read_batches
from harness.verdict.check import batch_spans
from scenarios.admission import Offsets
from scenarios.base import OracleContext, Scenario
from scenarios.presets import EVENT_TIME, STATEFUL_FILE_SINK

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

WINDOW = "10 seconds"
WATERMARK_DELAY = "5 seconds"
DELAY_MS = 5_000
#: Output columns that identify one aggregate row (a group).
GROUP = ("window_start", "window_end", "key")


def aggregate(df: DataFrame) -> DataFrame:
    """Per 10-s window and key: ``rows`` (count) and ``value_sum``; the window
    flattened into ``window_start``/``window_end`` (the checker compares flat
    rows). ``withWatermark`` is a no-op on a batch DataFrame."""
    return window_aggregate(df)


def window_aggregate(
    df: DataFrame, extra_keys: Mapping[str, Column] | None = None, value: Callable[[str], Column] = F.sum
) -> DataFrame:
    """:func:`aggregate` grouped by ``extra_keys`` too (name -> expression, output after ``key``) and with
    ``value("value")`` as ``value_sum``: the next versions of this pipeline in the upgrade scenarios."""
    extra = [c.alias(n) for n, c in (extra_keys or {}).items()]
    return (
        df.withWatermark("event_time", WATERMARK_DELAY)
        .groupBy(F.window("event_time", WINDOW), "key", *extra)
        .agg(F.count(F.lit(1)).alias("rows"), value("value").alias("value_sum"))
        .select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "key",
            *(extra_keys or {}),
            "rows",
            "value_sum",
        )
    )


def last_batch_start(checkpoint: str) -> Offsets | None:
    """Start offsets (per source partition) of the newest committed batch; ``None`` without one. Rows below
    them were read by earlier batches. Spark's file source over the harness's files logs file names, not
    offsets: its batch starts where its first file does, and a partition with no file in that batch starts
    past everything earlier batches read of it (:func:`harness.verdict.check.batch_spans`)."""
    committed = [r for r in read_batches(checkpoint) if r.commit is not None and r.offsets is not None]
    if not committed:
        return None
    spans = [s for s in batch_spans(checkpoint) if s.committed]
    if not spans or spans[-1].batch_id != committed[-1].batch_id:  # the newest batch read nothing new
        ends: Offsets = {}
        for span in spans:
            ends.update({p: max(ends.get(p, 0), e) for p, e in span.end.items()})
        return ends
    start: Offsets = dict(spans[-1].start)
    for span in spans[:-1]:
        for p, e in span.end.items():
            if p not in spans[-1].start:
                start[p] = max(start.get(p, 0), e)
    return start


def closed_windows(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    """:func:`closed_windows_of` :func:`aggregate`."""
    return closed_windows_of(aggregate, batch_input, ctx)


def closed_windows_of(
    aggregate: Callable[[DataFrame], DataFrame], batch_input: DataFrame, ctx: OracleContext
) -> DataFrame:
    """The batch aggregation (``aggregate``, with ``window_end``) over all input, keeping the windows the run's last
    batch had closed. Append mode emits a window when its state is evicted,
    ``window.end <= watermark`` (``WatermarkSupport.watermarkExpression``:
    ``LessThanOrEqual(window.end, watermarkMs)``). The watermark a batch uses is
    the newest event time of all earlier batches minus the delay; earlier
    batches hold exactly the input before the last batch's start offsets, so
    it is computed here from the input and the offset log, not taken from
    Spark's watermark (``ctx.watermark_ms``). No earlier batch: nothing closed.
    (With no-data batches on, the last batch would be one and its start the
    end of all input: the same formula.)"""
    start = last_batch_start(ctx.checkpoint)
    if not start:
        return aggregate(batch_input).limit(0)
    before = F.lit(False)
    for partition, offset in start.items():
        before = before | ((F.col("partition") == partition) & (F.col("offset") < offset))
    newest = batch_input.where(before).agg(F.unix_millis(F.max("event_time")).alias("ms")).first()
    if newest is None or newest["ms"] is None:
        return aggregate(batch_input).limit(0)
    watermark = F.timestamp_millis(F.lit(newest["ms"] - DELAY_MS))
    return aggregate(batch_input).where(F.col("window_end") <= watermark)


SCENARIO = Scenario(
    name="agg_watermark_append",
    summary="10 s windowed count/sum with watermark, append mode -> parquet file sink (expected: exactly-once)",
    guarantee="exactly-once",
    transform=aggregate,
    identity=GROUP,
    oracle=closed_windows,
    **EVENT_TIME,
    **STATEFUL_FILE_SINK,
)
