"""``foreachbatch_delta_merge`` without the session txn confs: one bug away from it.

Purpose: the broken twin, as users write it (delta-io/delta #370, #3934): the writer options
``txnAppId``/``txnVersion`` do not apply to ``MERGE``, and this merge sets no session confs, so nothing tells
Delta that a batch was already merged. The bug: when Spark re-runs a batch whose merge committed (a kill
between the Delta commit and ``commits/N``), its counts and sums are added a second time.
Faults: as ``foreachbatch_delta_merge``. Pass condition for the harness: after a ``sink.commit.after`` kill of
a batch with data the run is flagged with ``wrong-value`` groups (over-counted) naming the Delta versions.
Requirements: Delta's jars (``harness setup`` fetches them).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import SinkContext
from scenarios.delta.sinks import merge_totals, table_path
from scenarios.library.agg_watermark_append import GROUP, aggregate
from scenarios.library.foreachbatch_delta_merge import ADDED
from scenarios.library.foreachbatch_delta_merge import SCENARIO as CORRECT

if TYPE_CHECKING:
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    write = merge_totals(table_path(ctx), GROUP, aggregate, ADDED, txn_app=None)
    return writer.foreachBatch(crash_injecting_foreach_batch(write, ctx.faults))


SCENARIO = dataclasses.replace(
    CORRECT,
    name="foreachbatch_delta_merge_no_txn",
    summary="foreachBatch MERGE of window totals into Delta without txn confs (expected: over-count on replay)",
    guarantee="at-least-once",
    attach_sink=attach_sink,
)
