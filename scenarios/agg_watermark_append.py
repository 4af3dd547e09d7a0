"""Windowed aggregation with a watermark, append mode, into the parquet file sink.

Purpose: the canonical stateful pipeline. ``withWatermark("event_time", 5 s)``,
10-second tumbling windows per ``key``, ``count`` and ``sum(value)``; in
append mode a window's row is written once, when the watermark closes it.
Faults: SIGKILL of the driver's process groups while the next batch is
planned (``source.latest_offset``), after ``offsets/N`` is logged, after the
file sink logged ``_spark_metadata/N`` but before ``commits/N``
(``sink.commit.after``, reached by the checkpoint watcher) and after
``commits/N`` is logged. On restart Spark reloads state version N and re-runs
batch N; the file sink skips a batch its log already holds.
Guarantee checked: exactly-once: every closed window's row is visible exactly
once, with the aggregate of exactly the input rows of that window and key.
Pass condition: the rows readable through the sink equal, as a multiset, the
same aggregation in batch mode over exactly the input added, restricted to
the windows the final watermark has closed (``window.end <= watermark``).
Requirements: none. The source has one partition and event time jitter
(``disorder_ms``) below the watermark delay, so no row is ever behind the
watermark: Spark drops such rows, and which rows those are depends on batch
boundaries, which no batch oracle can know. With two partitions advancing
unevenly under one watermark that would happen, hence one partition.

Crash points not planned here: ``source.read`` and ``sink.write.*`` fire in
the source's read tasks, which for a stateful query are the pre-shuffle stage
(nothing durable differs from ``after_offsets_logged``), and only in batches
that read data, while Spark inserts a no-data batch (watermark advance) after
each run that the schedule's batch ids do not predict: a read-task kill planned
for such a batch id would never fire.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.base import OracleContext, Scenario, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

WINDOW = "10 seconds"
WATERMARK_DELAY = "5 seconds"
#: Output columns that identify one aggregate row (a group).
GROUP = ("window_start", "window_end", "key")
#: Event time advances 1 s per offset; jitter stays below the watermark delay.
SOURCE = {"num_keys": 4, "event_time_step_ms": 1_000, "disorder_ms": 3_000}
#: Crash points every batch reaches, data or no-data (see the module docstring).
FILE_SINK_POINTS = ("source.latest_offset", "after_offsets_logged", "sink.commit.after", "after_commit_logged")


def aggregate(df: DataFrame) -> DataFrame:
    """Per 10-s window and key: ``rows`` (count) and ``value_sum``; the window
    flattened into ``window_start``/``window_end`` (the checker compares flat
    rows). ``withWatermark`` is a no-op on a batch DataFrame."""
    return (
        df.withWatermark("event_time", WATERMARK_DELAY)
        .groupBy(F.window("event_time", WINDOW), "key")
        .agg(F.count(F.lit(1)).alias("rows"), F.sum("value").alias("value_sum"))
        .select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "key",
            "rows",
            "value_sum",
        )
    )


def closed_windows(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    """The batch aggregation over all input, keeping the windows Spark's append
    mode has emitted by the end of the run: a window's state is evicted and
    emitted when ``window.end <= watermark`` (``WatermarkSupport.watermarkExpression``,
    ``LessThanOrEqual(window.end, watermarkMs)``), and the run ends with the
    no-data batch that applies the final watermark (``ctx.watermark_ms``)."""
    watermark = F.timestamp_millis(F.lit(ctx.watermark_ms))
    return aggregate(batch_input).where(F.col("window_end") <= watermark)


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.outputMode("append").format("parquet").option("path", ctx.output)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.read.schema(schema).parquet(ctx.output)


SCENARIO = Scenario(
    name="agg_watermark_append",
    summary="10 s windowed count/sum with watermark, append mode -> parquet file sink (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=FILE_SINK_POINTS,
    transform=aggregate,
    attach_sink=attach_sink,
    read_output=read_output,
    partitions=1,
    rows_per_offset=2,
    max_rows_per_batch=20,
    rows_per_round=(20, 40),
    identity=GROUP,
    oracle=closed_windows,
    source_overrides=SOURCE,
)
