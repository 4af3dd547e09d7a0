"""Stateless map/filter -> ``foreachBatch`` appending through delta-rs, the txn checked before the write.

Purpose: a second, JVM-free Delta writer (``deltalake``): the batch is handed over as Arrow and appended with an
application transaction (the run's app id, the batch id) in the same commit. delta-rs does not skip a version
it has already recorded (delta-rs #2580), so the function reads ``transaction_version(app)`` first and writes
nothing for a batch at or below it (:func:`scenarios.delta.sinks.deltars_append`). Compare
``foreachbatch_deltars_unchecked``.
Faults: SIGKILL at every crash point a ``foreachBatch`` sink reaches, and at any step of the function.
Guarantee checked: exactly-once. Pass condition: the table, read by Spark's Delta reader, equals the same
transform over exactly the input added.
Requirements: the set-up's Delta jars (Spark reads the table back); ``deltalake`` from PyPI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fault_injectors.plan import ALL_CRASH_POINTS
from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import Scenario, SinkContext
from scenarios.delta.sinks import app_id, deltars_append, read_delta, table_path
from scenarios.library.file_sink_stateless import transform
from scenarios.presets import DELTA, PYTHON_SINK

if TYPE_CHECKING:
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    write = deltars_append(table_path(ctx), app_id(ctx, "deltars"), check_first=True)
    return writer.foreachBatch(crash_injecting_foreach_batch(write, ctx.faults))


SCENARIO = Scenario(
    name="foreachbatch_deltars_txn",
    summary="map/filter -> foreachBatch delta-rs append, txn version checked first (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=ALL_CRASH_POINTS,
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_delta,
    **PYTHON_SINK,
    **DELTA,
)
