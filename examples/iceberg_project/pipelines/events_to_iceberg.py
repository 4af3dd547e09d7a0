"""Events streamed into an Iceberg table, as Iceberg's Spark docs show ("Structured Streaming": a streaming
query writing with ``format("iceberg")`` to an existing table).

The table lives in a Hadoop catalog whose warehouse is under the run's output directory. Iceberg's
streaming writer records each micro-batch's query id and epoch in the snapshot it commits and skips an
epoch it has committed already, so a batch Spark runs again after a crash adds nothing.

``EVENTS_APPEND`` is the same pipeline written with ``foreachBatch`` and ``DataFrameWriterV2.append()``:
nothing tells Iceberg that a batch was written before, so a batch run again is appended twice.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import TYPE_CHECKING

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from scenarios import Scenario

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

    from scenarios import SinkContext

COLUMNS = "partition INT, offset BIGINT, seq INT, device STRING, reading BIGINT, event_time TIMESTAMP"


def transform(df: DataFrame) -> DataFrame:
    """Readings of devices, odd values dropped as sensor noise."""
    return df.select(
        "partition",
        "offset",
        "seq",
        F.concat(F.lit("dev-"), (F.col("key") % 7).cast("string")).alias("device"),
        (F.col("value") % 500).alias("reading"),
        "event_time",
    ).where(F.col("value") % 2 == 0)


def events_table(spark: SparkSession, ctx: SinkContext) -> str:
    """The run's Iceberg table, created if missing. Its catalog is named after the run's output directory,
    so a session that reads several runs never mixes their warehouses."""
    catalog = "lake_" + hashlib.sha1(ctx.output.encode()).hexdigest()[:10]
    spark.conf.set(f"spark.sql.catalog.{catalog}", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set(f"spark.sql.catalog.{catalog}.type", "hadoop")
    spark.conf.set(f"spark.sql.catalog.{catalog}.warehouse", f"{ctx.output}/warehouse")
    table = f"{catalog}.telemetry.events"
    spark.sql(f"CREATE TABLE IF NOT EXISTS {table} ({COLUMNS}) USING iceberg")
    return table


def stream_to_iceberg(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Iceberg's streaming sink, appending to the table."""
    table = events_table(SparkSession.active(), ctx)
    return writer.format("iceberg").outputMode("append").option("path", table)


def append_each_batch(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Each micro-batch appended with ``writeTo(...).append()``."""
    table = events_table(SparkSession.active(), ctx)

    def append(batch: DataFrame, batch_id: int) -> None:
        batch.writeTo(table).append()

    return writer.foreachBatch(append)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """The table as its readers see it: the current snapshot."""
    return spark.table(events_table(spark, ctx)).select(*schema.fieldNames())


EVENTS = Scenario(
    name="events_to_iceberg",
    summary="device readings -> Iceberg's streaming sink, appending to a Hadoop-catalog table",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "sink.write.end", "after_commit_logged", "source.read"),
    transform=transform,
    attach_sink=stream_to_iceberg,
    read_output=read_output,
)

EVENTS_APPEND = dataclasses.replace(
    EVENTS,
    name="events_to_iceberg_append",
    summary="device readings -> foreachBatch writeTo(table).append() into Iceberg",
    kill_points=("after_offsets_logged", "sink.commit.before", "sink.commit.after", "after_commit_logged"),
    attach_sink=append_each_batch,
)
