"""``foreachbatch_delta_upsert`` writing each batch in two Delta commits under one txn version: one bug away.

Purpose: the broken twin, as users write it to keep commits small: the function sets the session txn confs
(the run's app id, the batch id) once, as Delta's documentation shows, then merges the batch in two chunks
(rows whose hash of the key is even, then odd), each chunk its own ``MERGE`` and so its own Delta commit.
The bug: the first commit records the txn (app id, batch id), and Delta skips every later write of the
session that carries a version not above it, so the second chunk's merge is skipped: no error, no commit,
its rows never reach the table (with Delta's default ``spark.databricks.delta.write.txnVersion.autoReset.
enabled=false``; with it on, the second merge runs without a txn). Most batches lose about half their rows,
with or without a crash (a batch whose rows all hash to the first chunk loses none); a replay changes
nothing. Writes of one batch that must all land need one commit, or one txn version each
(``batch_id * chunks + i``).
Faults: as ``foreachbatch_delta_upsert``. Pass condition for the harness: the run is flagged with ``lost``
rows in most batches, each naming its batch id and the Delta version(s) the batch wrote.
Requirements: Delta's jars (``harness setup`` fetches them).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import SinkContext
from scenarios.delta.sinks import ForeachBatch, app_id, session_txn, table_path
from scenarios.library.foreachbatch_delta_upsert import KEYS
from scenarios.library.foreachbatch_delta_upsert import SCENARIO as CORRECT
from scenarios.sinks.delta_upsert import merge_condition

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.readwriter import DataStreamWriter

#: How many merges (Delta commits) one batch is written in.
CHUNKS = 2


def split_upsert(path: str, txn_app: str) -> ForeachBatch:
    """``foreachBatch`` function: the batch merged on :data:`KEYS` in :data:`CHUNKS` commits, all under the
    session txn confs (``txn_app``, batch id). Only the first chunk is written (see the module docstring)."""

    def upsert(batch_df: DataFrame, batch_id: int) -> None:
        from delta.tables import DeltaTable
        from pyspark.sql import functions as F

        spark = batch_df.sparkSession
        if not DeltaTable.isDeltaTable(spark, path):
            DeltaTable.createIfNotExists(spark).location(path).addColumns(batch_df.schema).execute()
        chunk_of = F.pmod(F.hash(*KEYS), F.lit(CHUNKS))
        with session_txn(spark, txn_app, batch_id):
            for chunk in range(CHUNKS):
                (
                    DeltaTable.forPath(spark, path)
                    .alias("t")
                    .merge(batch_df.where(chunk_of == chunk).alias("s"), merge_condition(KEYS))
                    .whenMatchedUpdateAll()
                    .whenNotMatchedInsertAll()
                    .execute()
                )

    return upsert


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    write = split_upsert(table_path(ctx), app_id(ctx, "upsert"))
    return writer.foreachBatch(crash_injecting_foreach_batch(write, ctx.faults))


SCENARIO = dataclasses.replace(
    CORRECT,
    name="foreachbatch_delta_upsert_split",
    summary="foreachBatch Delta MERGE of a batch in two commits under one txn version (expected: lost rows)",
    guarantee="violated",
    attach_sink=attach_sink,
)
