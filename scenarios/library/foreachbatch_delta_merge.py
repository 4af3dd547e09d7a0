"""Per-batch window aggregates ``MERGE``d additively into a Delta table, with Delta's session txn confs.

Purpose: the ``foreachBatch`` + ``MERGE INTO`` upsert teams write for running totals: each micro-batch is
pre-aggregated (10-s windows per key: count, sum of values, as ``agg_update_naive``) and merged into the table,
adding to the stored totals where the group exists (:func:`scenarios.delta.sinks.merge_totals`). Such a merge
is not idempotent; what makes it exactly-once is that it runs with ``spark.databricks.delta.write.txnAppId`` /
``txnVersion`` set to (the query's app id, the batch id), so Delta skips the merge of a batch it has already
committed. (Writer options do not reach MERGE; the session confs are shared by every query of the session,
delta-io/delta #1999, so the function sets them around its own merge and unsets them after.)
Faults: SIGKILL at every crash point a ``foreachBatch`` sink reaches, including after the merge committed but
before ``commits/N`` (``sink.commit.after``: the replay is skipped), and at any step of the function.
Guarantee checked: exactly-once. Pass condition: the table equals, as a multiset, the aggregation over all
input; a group that differs is a ``wrong-value`` with the Delta version of its row.
Requirements: Delta's jars (``harness setup`` fetches them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fault_injectors.plan import ALL_CRASH_POINTS
from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import Scenario, SinkContext
from scenarios.delta.sinks import app_id, merge_totals, read_delta, table_path
from scenarios.library.agg_update_naive import all_windows, passthrough
from scenarios.library.agg_watermark_append import GROUP, aggregate
from scenarios.presets import DELTA, EVENT_TIME

if TYPE_CHECKING:
    from pyspark.sql.streaming.readwriter import DataStreamWriter

#: The stored columns a merge adds to.
ADDED = ("rows", "value_sum")


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    write = merge_totals(table_path(ctx), GROUP, aggregate, ADDED, txn_app=app_id(ctx, "merge"))
    return writer.foreachBatch(crash_injecting_foreach_batch(write, ctx.faults))


SCENARIO = Scenario(
    name="foreachbatch_delta_merge",
    summary="foreachBatch MERGE of window totals into Delta with the session txn confs (expected: exactly-once)",
    guarantee="exactly-once",
    # The streaming query is stateless (no no-data batches): every crash point of a ``foreachBatch`` sink.
    kill_points=ALL_CRASH_POINTS,
    sink_steps=True,
    transform=passthrough,
    attach_sink=attach_sink,
    read_output=read_delta,
    identity=GROUP,
    oracle=all_windows,
    **EVENT_TIME,
    **DELTA,
)
