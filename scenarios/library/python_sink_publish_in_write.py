"""Stateless map/filter into a Python sink that publishes rows inside ``write()``.

Purpose: a known at-least-once Python sink
(:class:`scenarios.sinks.publish_in_write.PublishInWriteSink`), to show the
harness catches the most common connector mistake: making rows visible in the
executor-side ``write()`` instead of the driver-side ``commit()``.
Faults: SIGKILL at every crash point a Python sink reaches (see
:mod:`scenarios.library.python_sink_transactional`).
Guarantee checked: exactly-once, which this sink does *not* give. When the
driver dies after write tasks of batch N published their rows but before
Spark wrote ``commits/N`` (``sink.commit.before``, ``sink.commit.after``, and
at the write-task points whenever another task of batch N had already
finished), Spark re-runs batch N and those rows appear twice.
Pass condition for the harness: the run is flagged with ``duplicate``
anomalies naming batch N and the kill before it; kills before any task
published or after ``commits/N`` leave the output exact.
Requirements: none beyond PySpark and pyarrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scenarios.base import Scenario, SinkContext
from scenarios.library.file_sink_stateless import transform
from scenarios.library.python_sink_transactional import PYTHON_SINK_POINTS, crash_injecting_sink
from scenarios.presets import PYTHON_SINK
from scenarios.sinks.publish_in_write import read_published

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

INNER = "scenarios.sinks.publish_in_write:PublishInWriteSink"


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return crash_injecting_sink(writer, ctx, INNER)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame(read_published(ctx.output), schema)


SCENARIO = Scenario(
    source_write_points=False,
    name="python_sink_publish_in_write",
    summary="map/filter -> Python sink publishing rows in write() (expected: duplicates on replay)",
    guarantee="at-least-once",
    kill_points=PYTHON_SINK_POINTS,
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_output,
    **PYTHON_SINK,
)
