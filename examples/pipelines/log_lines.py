"""A pipeline fed by a connector author's own Python ``DataSource``: the JSON-lines log source of
:mod:`examples.connectors.jsonl_source`, fed through its context factory
(:func:`examples.connectors._jsonl.log_context`), as ``Scenario(source=PythonSource(...))``.

The transform keeps each line and adds a ``bucket``. ``SCENARIO`` upserts each batch into SQLite keyed
by its batch id (expected: exactly-once); ``BROKEN_SINK_SCENARIO`` differs by one thing, a
``foreachBatch`` append without batch-id dedup, so a batch replayed after a kill is written twice (the
duplicates are located in the killed batch by the source's own offsets).

Run it like any scenario::

    python -m harness chaos examples.pipelines.log_lines:BROKEN_SINK_SCENARIO --examples 10 --seed 1
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from fault_injectors.sinks import crash_injecting_foreach_batch
from harness.sources import PythonSource
from scenarios.base import Scenario, SinkContext
from scenarios.sinks.sqlite_upsert import read_sqlite, upsert_into_sqlite

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

CONTEXT = "examples.connectors._jsonl:log_context"
SOURCE = PythonSource("examples.connectors.jsonl_source:JsonlSource", CONTEXT)
#: The source fires no crash point itself: the checkpoint watcher kills after offsets/N and commits/N,
#: the foreachBatch wrapper before and after the user's function.
KILL_POINTS = ("after_offsets_logged", "sink.commit.before", "sink.commit.after", "after_commit_logged")


def bucketed(lines: DataFrame) -> DataFrame:
    """Every line, with a ``bucket`` of its value (stateless: the same on a stream and on the oracle's batch)."""
    return lines.withColumn("bucket", F.col("value") % 10)


def _database(ctx: SinkContext) -> Path:
    return Path(ctx.output) / "lines.sqlite3"


def _upsert(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    Path(ctx.output).mkdir(parents=True, exist_ok=True)
    return writer.foreachBatch(crash_injecting_foreach_batch(upsert_into_sqlite(_database(ctx)), ctx.faults))


def _read_upserted(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame(read_sqlite(_database(ctx)), schema)


def _append(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    def append_batch(batch_df: DataFrame, batch_id: int) -> None:
        batch_df.write.mode("append").parquet(ctx.output)

    return writer.foreachBatch(crash_injecting_foreach_batch(append_batch, ctx.faults))


def _read_appended(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.read.schema(schema).parquet(ctx.output)


def log_scenario(name: str, source: PythonSource, *, upsert: bool = True) -> Scenario:
    """The pipeline over ``source``; ``upsert=False`` takes the append sink without batch-id dedup."""
    return Scenario(
        name=name,
        summary=f"{source.describe()} -> bucketed lines -> "
        + ("SQLite upsert keyed by batch id" if upsert else "foreachBatch append without batch-id dedup"),
        guarantee="exactly-once" if upsert else "at-least-once",
        kill_points=KILL_POINTS,
        transform=bucketed,
        attach_sink=_upsert if upsert else _append,
        read_output=_read_upserted if upsert else _read_appended,
        identity=("partition", "line"),
        sink_steps=True,
        rows_per_round=(10, 30),
        source=source,
    )


SCENARIO = log_scenario("log_lines_upsert", SOURCE)
BROKEN_SINK_SCENARIO = log_scenario("log_lines_append_naive", SOURCE, upsert=False)
