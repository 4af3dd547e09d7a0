"""Page clicks read by Spark's CSV file source, written from docs/sources.md.

The harness publishes the clicks as CSV files in a directory; the pipeline reads them with Spark's
own file source, keeps the clicks that stayed at least half a second and converts the dwell time to
seconds. The sink is a ``foreachBatch`` function that writes each batch to a JSON-lines file
named by its batch id (staged under a hidden name, then renamed), so a batch Spark runs again
replaces its own file. Its twin appends every batch to one file: a batch run again is appended
twice.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios import FileDirectory, Rows, Scenario, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

SCHEMA = "page STRING, user_id INT, dwell_ms BIGINT"
PAGES = ("home", "search", "cart", "checkout", "help", "account")


def click(seed: int, partition: int, offset: int, seq: int) -> tuple[str, int, int]:
    """One click, a pure function of its position (a tuple in schema order)."""
    h = (seed * 1_000_003 + partition * 7_919 + offset * 2_654_435_761 + seq * 97) % 2_147_483_647
    return PAGES[h % len(PAGES)], 1 + h % 500, (h // 7) % 3_000


def transform(df: DataFrame) -> DataFrame:
    """Clicks of at least half a second, dwell time in seconds, with their provenance."""
    return df.where(F.col("dwell_ms") >= 500).select(
        "partition", "offset", "seq", "page", "user_id", (F.col("dwell_ms") / 1000).alias("dwell_s")
    )


def _lines(batch: DataFrame) -> str:
    return "".join(json.dumps(r.asDict()) + "\n" for r in batch.collect())


def file_per_batch(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Each batch replaces the file of its own batch id."""
    output = Path(ctx.output)

    def write(batch: DataFrame, batch_id: int) -> None:
        text = _lines(batch)
        output.mkdir(parents=True, exist_ok=True)
        target = output / f"clicks-{batch_id:06d}.jsonl"
        staging = output / f".{target.name}.tmp"
        with open(staging, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(staging, target)

    return writer.foreachBatch(write)


def one_file(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Each batch is appended to one file: no batch id involved."""
    output = Path(ctx.output)

    def write(batch: DataFrame, batch_id: int) -> None:
        text = _lines(batch)
        output.mkdir(parents=True, exist_ok=True)
        with open(output / "clicks-all.jsonl", "a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())

    return writer.foreachBatch(write)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Every JSON-lines file the sink wrote (not the staged ones), in the oracle's schema."""
    root = Path(ctx.output)
    files = sorted(str(f) for f in root.glob("clicks-*.jsonl")) if root.is_dir() else []
    if not files:
        return spark.createDataFrame([], schema)
    return spark.read.schema(schema).json(files)


CORRECT = Scenario(
    name="clicks_files",
    summary="CSV clicks of at least 0.5 s -> foreachBatch JSON lines, one file per batch id",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "sink.commit.after", "after_commit_logged"),
    transform=transform,
    attach_sink=file_per_batch,
    read_output=read_output,
    source=FileDirectory("csv", Rows(SCHEMA, click)),
)
BROKEN = dataclasses.replace(
    CORRECT,
    name="clicks_files_append",
    summary="CSV clicks of at least 0.5 s -> foreachBatch JSON lines appended to one file",
    attach_sink=one_file,
)
