"""Stateless map/filter -> ``foreachBatch`` ``MERGE INTO`` a Delta table keyed by the row's identity, with
Delta's session txn confs: the copyable upsert of :mod:`scenarios.sinks.delta_upsert`, as a library pipeline.

Purpose: the upsert teams write when a row may come again (CDC, late corrections): every batch is one
``MERGE`` on the rows' identity (``partition, offset, seq``: the source's provenance), a stored row replaced
by the batch's, a new one inserted, run with ``spark.databricks.delta.write.txnAppId``/``txnVersion`` = (the
run's app id, the batch id) set just around it. A replay whose merge committed is skipped by Delta; one whose
merge did not commit runs as a first attempt. Compare ``foreachbatch_delta_upsert_split``, its twin.
Faults: SIGKILL at every crash point a ``foreachBatch`` sink reaches, including after the merge committed but
before ``commits/N`` (``sink.commit.after``), and at any step of the function.
Guarantee checked: exactly-once. Pass condition: the table's current version equals, as a multiset, the same
transform over exactly the input added.
Requirements: Delta's jars (``harness setup`` fetches them).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import SinkContext
from scenarios.delta.sinks import app_id, table_path
from scenarios.library.foreachbatch_delta_txn import SCENARIO as APPEND
from scenarios.sinks.delta_upsert import DEFAULT_KEYS, delta_upsert

if TYPE_CHECKING:
    from pyspark.sql.streaming.readwriter import DataStreamWriter

#: The merge's key: the row's identity in the replayable source.
KEYS = DEFAULT_KEYS


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    write = delta_upsert(table_path(ctx), app_id=app_id(ctx, "upsert"), keys=KEYS)
    return writer.foreachBatch(crash_injecting_foreach_batch(write, ctx.faults))


SCENARIO = dataclasses.replace(
    APPEND,
    name="foreachbatch_delta_upsert",
    summary="map/filter -> foreachBatch Delta MERGE keyed by row, session txn confs (expected: exactly-once)",
    attach_sink=attach_sink,
)
