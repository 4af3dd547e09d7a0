"""Stateless map/filter into the reference transactional Python sink.

Purpose: show that a Python ``DataSourceStreamWriter`` that stages in
``write()`` and publishes atomically and idempotently in ``commit(messages,
batchId)`` (:class:`scenarios.sinks.transactional.TransactionalFileSink`) is
exactly-once, and give connector authors a template that the harness checks.
The sink runs inside the ``crash_injecting`` wrapper
(:mod:`fault_injectors.sinks`), which adds the driver-side commit points.
Faults: SIGKILL of the driver's process groups at every crash point of the
micro-batch protocol: planning (``source.latest_offset``), after ``offsets/N``,
in the write tasks (``source.read``, ``sink.write.start|mid|end``), around the
sink's commit (``sink.commit.before|after``) and after ``commits/N``.
Guarantee checked: exactly-once; in particular a batch replayed after
``sink.commit.after`` (published, ``commits/N`` not written) must be a no-op.
Pass condition: the rows :func:`~scenarios.sinks.transactional.read_visible`
returns equal, as a multiset, the same transform over exactly the input added.
Requirements: none beyond PySpark and pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fault_injectors.plan import ALL_CRASH_POINTS
from scenarios.base import Scenario, SinkContext
from scenarios.library.file_sink_stateless import transform
from scenarios.presets import PYTHON_SINK
from scenarios.sinks.transactional import read_visible

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

INNER = "scenarios.sinks.transactional:TransactionalFileSink"

#: Every crash point a Python ``DataSourceStreamWriter`` fed by the replayable source reaches: all of them.
PYTHON_SINK_POINTS = ALL_CRASH_POINTS


def crash_injecting_sink(writer: DataStreamWriter, ctx: SinkContext, inner: str) -> DataStreamWriter:
    """``writer`` into the Python sink class ``inner`` (``module:Class``) wrapped
    in the ``crash_injecting`` format, wired to the run's faults, with option
    ``path`` = the run's sink output directory."""
    from pyspark.sql import SparkSession

    from fault_injectors.sinks import CrashInjectingDataSource

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise RuntimeError("crash_injecting sink: no active SparkSession to register the format in")
    spark.dataSource.register(CrashInjectingDataSource)
    fault_dir = ctx.faults.dir
    return (
        writer.format("crash_injecting")
        .option("inner", inner)
        .option("path", ctx.output)
        .option("checkpoint", ctx.checkpoint)
        .option("fault_dir", "" if fault_dir is None else str(fault_dir))
    )


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return crash_injecting_sink(writer, ctx, INNER)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame(read_visible(ctx.output), schema)


SCENARIO = Scenario(
    source_write_points=False,
    name="python_sink_transactional",
    summary="map/filter -> Python sink staging in write(), publishing in commit() (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=PYTHON_SINK_POINTS,
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_output,
    **PYTHON_SINK,
)
