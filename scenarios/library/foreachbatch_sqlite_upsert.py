"""Stateless map/filter into SQLite through an idempotent ``foreachBatch`` upsert.

Purpose: the reference way to make ``foreachBatch`` exactly-once
(:func:`scenarios.sinks.sqlite_upsert.upsert_into_sqlite`): the batch's rows and its
batch id are written in one transaction, and a batch id already present makes
the whole batch a no-op. Compare ``foreachbatch_append_naive``.
Faults: SIGKILL at every crash point a ``foreachBatch`` sink reaches:
planning (``source.latest_offset``), after ``offsets/N``, while the function
is reading the batch with its SQLite transaction open (``source.read``,
``sink.write.start|mid|end``), before the function runs and after it committed
but before Spark writes ``commits/N`` (``sink.commit.before|after``, fired by
:func:`fault_injectors.sinks.crash_injecting_foreach_batch`), and after
``commits/N``.
Guarantee checked: exactly-once: a transaction cut by the kill is rolled back,
and the batch Spark replays after ``sink.commit.after`` is skipped.
Pass condition: the rows in the SQLite table equal, as a multiset, the same
transform over exactly the input added.
Requirements: none (SQLite is in Python's standard library).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fault_injectors.plan import ALL_CRASH_POINTS
from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import Scenario, SinkContext
from scenarios.library.file_sink_stateless import transform
from scenarios.presets import PYTHON_SINK
from scenarios.sinks.sqlite_upsert import read_sqlite, upsert_into_sqlite

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

#: Every crash point a ``foreachBatch`` sink fed by the replayable source reaches: all of them.
FOREACH_BATCH_POINTS = ALL_CRASH_POINTS


def database(ctx: SinkContext) -> Path:
    return Path(ctx.output) / "sink.sqlite3"


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.foreachBatch(crash_injecting_foreach_batch(upsert_into_sqlite(database(ctx)), ctx.faults))


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame(read_sqlite(database(ctx)), schema)


SCENARIO = Scenario(
    name="foreachbatch_sqlite_upsert",
    summary="map/filter -> foreachBatch upsert into SQLite keyed by batch id (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=FOREACH_BATCH_POINTS,
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_output,
    **PYTHON_SINK,
)
