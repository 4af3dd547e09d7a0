"""Stateless map/filter -> ``foreachBatch`` appending to a Delta table with ``txnAppId``/``txnVersion``.

Purpose: the documented way to make a ``foreachBatch`` Delta write idempotent: the writer options
``txnAppId`` (one id per query and table) and ``txnVersion`` (the batch id) are committed with the data, and
Delta skips a write whose version is not above the table's txn for the app
(:func:`scenarios.delta.sinks.append_with_txn`). Compare ``foreachbatch_delta_naive``.
Faults: SIGKILL at every crash point a ``foreachBatch`` sink reaches, including after the append committed
but before Spark writes ``commits/N`` (``sink.commit.after``), and at any step of the function.
Guarantee checked: exactly-once. Pass condition: the table's current version equals, as a multiset, the same
transform over exactly the input added.
Requirements: Delta's jars (``harness setup`` fetches them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fault_injectors.plan import ALL_CRASH_POINTS
from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import Scenario, SinkContext
from scenarios.delta.sinks import app_id, append_with_txn, read_delta, table_path
from scenarios.library.file_sink_stateless import transform
from scenarios.presets import DELTA, PYTHON_SINK

if TYPE_CHECKING:
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    write = append_with_txn(table_path(ctx), app_id(ctx, "append"))
    return writer.foreachBatch(crash_injecting_foreach_batch(write, ctx.faults))


SCENARIO = Scenario(
    name="foreachbatch_delta_txn",
    summary="map/filter -> foreachBatch Delta append with txnAppId/txnVersion (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=ALL_CRASH_POINTS,
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_delta,
    **PYTHON_SINK,
    **DELTA,
)
