"""Sinks as a team writes them from Spark's docs, handed to the harness as they are: a ``foreachBatch``
function and a ``foreach`` writer, neither wrapped by hand. The harness wraps them itself while it calls
``attach_sink``, so ``sink.commit.before``/``sink.commit.after`` and ``sink.step`` kills reach the function,
and ``sink.write.*`` and ``sink.step`` kills reach the writer's ``open``/``process``/``close``.

- :data:`BATCH_FILES` writes each batch to a file named by its batch id (overwrite): a replayed batch
  replaces its own file, so it holds under any kill.
- :data:`APPEND`, its one-bug twin, appends each batch to the table: a kill after the append and before
  Spark's ``commits/N`` (``sink.commit.after``) makes Spark replay the batch, and its rows come twice.
- :data:`ROW_FILES` is a ``foreach`` writer that writes one file per row, named by the row's identity:
  idempotent per row.

Run them::

    .venv/bin/python -m harness run examples.pipelines.plain_sinks:APPEND --seed 1 --kill sink.commit.after:1
    .venv/bin/python -m harness run examples.pipelines.plain_sinks:BATCH_FILES --seed 1 --kill sink.step:1:2
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from scenarios import Scenario

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

    from scenarios import SinkContext


def transform(df: DataFrame) -> DataFrame:
    return df.where(F.col("key") % 5 != 0).select("partition", "offset", "seq", "key", (F.col("value") * 2).alias("v"))


def batch_files(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    def write_batch(batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("overwrite").parquet(f"{ctx.output}/batches/{batch_id}")

    return writer.foreachBatch(write_batch)


def read_batches(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.read.schema(schema).parquet(f"{ctx.output}/batches/*")


def append(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    def append_batch(batch: DataFrame, batch_id: int) -> None:
        batch.write.mode("append").parquet(f"{ctx.output}/table")

    return writer.foreachBatch(append_batch)


def read_table(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.read.schema(schema).parquet(f"{ctx.output}/table")


class RowFileWriter:
    """``foreach`` writer: one JSON file per row, named by its identity (tmp file, then rename)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def open(self, partition_id: int, epoch_id: int) -> bool:
        Path(self.directory).mkdir(parents=True, exist_ok=True)
        return True

    def process(self, row: Any) -> None:
        target = Path(self.directory) / f"{row['partition']}-{row['offset']}-{row['seq']}.json"
        tmp = target.with_suffix(f".tmp-{os.getpid()}")
        tmp.write_text(json.dumps(row.asDict()))
        os.replace(tmp, target)

    def close(self, error: BaseException | None) -> None:
        pass


def row_files(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.foreach(RowFileWriter(f"{ctx.output}/rows"))


def read_rows(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    lines = [(p.read_text(),) for p in sorted(Path(f"{ctx.output}/rows").glob("*.json"))]
    raw = spark.createDataFrame(lines, "value STRING")
    return raw.select(F.from_json("value", schema).alias("r")).select("r.*")


_COMMON: dict[str, Any] = {
    "guarantee": "exactly-once",
    "kill_points": ("after_offsets_logged", "sink.commit.before", "sink.commit.after", "after_commit_logged"),
    "transform": transform,
}

BATCH_FILES = Scenario(
    name="plain_batch_files",
    summary="filter -> foreachBatch overwriting a file per batch id (unwrapped)",
    attach_sink=batch_files,
    read_output=read_batches,
    **_COMMON,
)
APPEND = Scenario(
    name="plain_append",
    summary="filter -> foreachBatch appending each batch (unwrapped; duplicates on a replay)",
    attach_sink=append,
    read_output=read_table,
    **_COMMON,
)
ROW_FILES = Scenario(
    name="plain_row_files",
    summary="filter -> foreach writer, one file per row (unwrapped; idempotent)",
    attach_sink=row_files,
    read_output=read_rows,
    **_COMMON,
)
