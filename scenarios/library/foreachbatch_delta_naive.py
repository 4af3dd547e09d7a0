"""``foreachbatch_delta_txn`` without the txn options: one bug away from it.

Purpose: the broken twin. The bug: the append carries no ``txnAppId``/``txnVersion``
(:func:`scenarios.delta.sinks.append_naive`), so when Spark re-runs a batch whose append had committed (a kill
between the Delta commit and ``commits/N``), Delta appends its rows a second time.
Faults: as ``foreachbatch_delta_txn``. Pass condition for the harness: after a ``sink.commit.after`` kill of
a batch with data the run is flagged with ``duplicate`` rows naming the batch and both Delta versions.
Requirements: Delta's jars (``harness setup`` fetches them).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import SinkContext
from scenarios.delta.sinks import append_naive, table_path
from scenarios.library.foreachbatch_delta_txn import SCENARIO as CORRECT

if TYPE_CHECKING:
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.foreachBatch(crash_injecting_foreach_batch(append_naive(table_path(ctx)), ctx.faults))


SCENARIO = dataclasses.replace(
    CORRECT,
    name="foreachbatch_delta_naive",
    summary="foreachBatch Delta append without txn options (expected: duplicates on replay)",
    guarantee="at-least-once",
    attach_sink=attach_sink,
)
