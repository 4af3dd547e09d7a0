"""A bronze -> silver hop between Delta tables, written from docs/delta.md.

The harness fills the input Delta table; the pipeline reads it with Spark's Delta source, keeps the
entries of at least 100 cents and names their account. The sink is a ``foreachBatch`` function that
appends each batch to a Delta table with Delta's idempotent-write options (``txnAppId`` and
``txnVersion`` = the batch id), so Delta skips a batch Spark runs again.
Its twin appends without them: a batch run again is appended twice.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios import Scenario, SinkContext
from scenarios.delta.source import DeltaTableSource
from scenarios.presets import DELTA

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

#: The application id of the silver writer: fixed, so a restarted query carries the same one.
APP_ID = "ledger-silver"


def transform(df: DataFrame) -> DataFrame:
    """Entries of at least 100 cents, with their account and provenance."""
    return df.select(
        "partition",
        "offset",
        "seq",
        F.concat(F.lit("acct-"), (F.col("key") % 10).cast("string")).alias("account"),
        (F.col("value") % 10_000).alias("cents"),
    ).where(F.col("cents") >= 100)


def idempotent_append(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Append each batch with ``txnAppId``/``txnVersion``: Delta skips a version it has seen."""
    table = f"{ctx.output}/silver"

    def write(batch: DataFrame, batch_id: int) -> None:
        (
            batch.write.format("delta")
            .mode("append")
            .option("txnAppId", APP_ID)
            .option("txnVersion", batch_id)
            .save(table)
        )

    return writer.foreachBatch(write)


def plain_append(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Append each batch with no transaction options."""
    table = f"{ctx.output}/silver"

    def write(batch: DataFrame, batch_id: int) -> None:
        batch.write.format("delta").mode("append").save(table)

    return writer.foreachBatch(write)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """The silver table, in the oracle's schema (no rows before its first commit)."""
    table = Path(ctx.output) / "silver"
    if not (table / "_delta_log").is_dir():
        return spark.createDataFrame([], schema)
    return spark.read.format("delta").load(str(table)).select(*schema.fieldNames())


CORRECT = Scenario(
    name="ledger_delta",
    summary="Delta source -> entries of 100+ cents -> foreachBatch Delta append with txn options",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "sink.commit.after", "after_commit_logged"),
    transform=transform,
    attach_sink=idempotent_append,
    read_output=read_output,
    source=DeltaTableSource(),
    **DELTA,
)
BROKEN = dataclasses.replace(
    CORRECT,
    name="ledger_delta_no_txn",
    summary="Delta source -> entries of 100+ cents -> foreachBatch Delta append, no txn options",
    attach_sink=plain_append,
)
