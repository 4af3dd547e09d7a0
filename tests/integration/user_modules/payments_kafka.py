"""Payments read from Kafka as production code reads them, written from docs/kafka.md.

The transform gets Spark's Kafka columns (``key, value, topic, partition, offset, ...``), parses the
JSON value and keeps the payments of at least 1 000 cents, named by the record's Kafka partition and
offset (the scenario's identity). The sink is a ``foreachBatch`` function that writes each batch
as JSON to a directory named by its batch id, in overwrite mode, so a batch Spark runs again
replaces its own directory. Its twin appends every batch to one directory: a batch run again is
appended twice.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios import Scenario, SinkContext
from scenarios.kafka import KafkaTopic

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

PAYMENT = "key INT, value BIGINT"


def transform(kafka: DataFrame) -> DataFrame:
    """Payments of at least 1 000 cents, by account, with the record's partition and offset."""
    payment = F.from_json(F.col("value").cast("string"), PAYMENT)
    parsed = kafka.select("partition", "offset", payment.alias("p"))
    return parsed.select(
        "partition",
        "offset",
        F.col("p.key").alias("account"),
        (F.col("p.value") % 100_000).alias("cents"),
    ).where(F.col("cents") >= 1_000)


def per_batch(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Each batch overwrites the directory of its own batch id."""
    output = ctx.output

    def write(batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("overwrite").json(f"{output}/payments-{batch_id:06d}")

    return writer.foreachBatch(write)


def appended(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Each batch is appended to one directory: no batch id involved."""
    output = ctx.output

    def write(batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("append").json(f"{output}/payments-all")

    return writer.foreachBatch(write)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Every directory the sink wrote, in the oracle's schema."""
    root = Path(ctx.output)
    dirs = sorted(str(d) for d in root.glob("payments-*") if d.is_dir()) if root.is_dir() else []
    if not dirs:
        return spark.createDataFrame([], schema)
    return spark.read.schema(schema).json(dirs)


CORRECT = Scenario(
    name="payments_kafka",
    summary="Kafka payments of 1 000+ cents -> foreachBatch JSON, one directory per batch id",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "sink.commit.after", "after_commit_logged"),
    transform=transform,
    attach_sink=per_batch,
    read_output=read_output,
    source=KafkaTopic(raw=True),
    identity=("partition", "offset"),
)
BROKEN = dataclasses.replace(
    CORRECT,
    name="payments_kafka_append",
    summary="Kafka payments of 1 000+ cents -> foreachBatch JSON appended to one directory",
    attach_sink=appended,
)
