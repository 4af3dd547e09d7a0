"""``foreachbatch_delta_txn`` with the streaming query's id as ``txnAppId``: Delta's documented choice.

Purpose: the held side of a hazard Delta documents (delta-io/delta#5259): Delta skips a write whose
``txnVersion`` is not above the one it recorded for the ``txnAppId``, and a query on a new checkpoint numbers
its batches from 0 again, so a constant app id (``foreachbatch_delta_txn``) makes every write of the new
query up to the old batch count a silent no-op. Delta's docs: "you can use the StreamingQuery ID as
txnAppId". The query id lives in the checkpoint, so a restart from it keeps the id (a replayed batch is still
skipped) and a fresh checkpoint brings a new one. Inside ``foreachBatch`` the id is the local property
``sql.streaming.queryId`` of the thread that runs the batch (classic sessions).
Faults: as ``foreachbatch_delta_txn``, and the nemesis ``reset_checkpoint`` (a fresh checkpoint).
Guarantee checked: exactly-once; after a fresh checkpoint the new query reads the source from its start, so
the rows added before it may be written once more (reported, not a violation), and none may be lost.
Requirements: Delta's jars (``harness setup`` fetches them).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import SinkContext
from scenarios.delta.sinks import ForeachBatch, table_path
from scenarios.library.foreachbatch_delta_txn import SCENARIO as CONSTANT_ID

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def append_with_query_id(path: str) -> ForeachBatch:
    """Append the batch with ``txnAppId`` = the running query's id and ``txnVersion`` = the batch id."""

    def write(batch_df: DataFrame, batch_id: int) -> None:
        query_id = batch_df.sparkSession.sparkContext.getLocalProperty("sql.streaming.queryId")
        if not query_id:  # outside a streaming batch the property is unset: never write without a txn
            raise RuntimeError("foreachBatch ran without the local property sql.streaming.queryId")
        (
            batch_df.write.format("delta")
            .mode("append")
            .option("txnAppId", f"append-{query_id}")
            .option("txnVersion", str(batch_id))
            .save(path)
        )

    return write


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.foreachBatch(crash_injecting_foreach_batch(append_with_query_id(table_path(ctx)), ctx.faults))


SCENARIO = dataclasses.replace(
    CONSTANT_ID,
    name="foreachbatch_delta_txn_query_id",
    summary="map/filter -> foreachBatch Delta append, txnAppId = the query's id (expected: exactly-once)",
    attach_sink=attach_sink,
)
