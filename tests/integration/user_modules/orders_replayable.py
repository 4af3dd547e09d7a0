"""Orders from the replayable source, written from the README and docs/getting-started.md.

The pipeline keeps orders whose value is not a multiple of 5 and prices them in cents. The sink is a
``foreachBatch`` function that writes each batch to a parquet directory named by its batch id, in
overwrite mode: a batch Spark runs again after a restart replaces its own directory.
Its twin appends every batch to one directory: a batch run again is appended twice.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios import Scenario, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType


def transform(df: DataFrame) -> DataFrame:
    """Orders worth keeping, priced in cents; the provenance columns stay."""
    return df.where(F.col("value") % 5 != 0).select(
        "partition", "offset", "seq", "key", (F.col("value") * 3).alias("cents")
    )


def by_batch_id(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Each batch overwrites the directory of its own batch id."""
    output = ctx.output

    def write(batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("overwrite").parquet(f"{output}/batch-{batch_id:06d}")

    return writer.foreachBatch(write)


def appending(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Each batch is appended to one directory: no batch id involved."""
    output = ctx.output

    def write(batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("append").parquet(f"{output}/batch-all")

    return writer.foreachBatch(write)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Every batch directory the sink wrote, read in the oracle's schema."""
    root = Path(ctx.output)
    dirs = sorted(str(d) for d in root.glob("batch-*") if d.is_dir()) if root.is_dir() else []
    if not dirs:
        return spark.createDataFrame([], schema)
    return spark.read.schema(schema).parquet(*dirs)


CORRECT = Scenario(
    name="orders_replayable",
    summary="orders priced in cents -> foreachBatch parquet, one directory per batch id",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "source.read", "sink.commit.after"),
    transform=transform,
    attach_sink=by_batch_id,
    read_output=read_output,
)
BROKEN = dataclasses.replace(
    CORRECT,
    name="orders_replayable_append",
    summary="orders priced in cents -> foreachBatch parquet appended to one directory",
    attach_sink=appending,
)
