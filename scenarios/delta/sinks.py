"""The Delta writes the library's pipelines make, one function each, and how a run's table is read back.

The library's tables live in ``<run output>/table`` (:func:`table_path`); a user's Delta sink may
write anywhere under the output (:func:`delta_tables` finds it).

The ``foreachBatch`` functions here take ``(batch_df, batch_id)`` and are wrapped by
:func:`fault_injectors.sinks.crash_injecting_foreach_batch` in the scenarios, so kills land before,
inside (``sink.step``) and after them. What makes each write exactly-once, or not, is said in its
docstring; the measured verdicts are in ``docs/delta.md``.

The pipelines that use these writers are stateless. Behind a *stateful* query a write Delta skips (a replayed
batch it already holds) never reads the batch, and Spark 4 then fails the query
(``STATE_STORE_COMMIT_VALIDATION_FAILED``, SPARK-52008): the copyable upsert of
:mod:`scenarios.sinks.delta_upsert` runs a skipped batch into the ``noop`` sink for that reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from scenarios.base import SinkContext

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql.types import StructType

#: Session confs Delta reads for the idempotence of MERGE/UPDATE/DELETE (shared by every query of a session).
TXN_APP_CONF = "spark.databricks.delta.write.txnAppId"
TXN_VERSION_CONF = "spark.databricks.delta.write.txnVersion"

ForeachBatch = Callable[["DataFrame", int], None]


def table_path(ctx: SinkContext) -> str:
    """The run's Delta table: ``<output>/table``."""
    return str(Path(ctx.output) / "table")


def app_id(ctx: SinkContext, name: str) -> str:
    """A txn application id for the run's table: ``<name>-<output directory's name>``, the same in every driver
    that restarts the run (Delta compares versions per app id, so it must not change across restarts; every
    run writes a table of its own, so runs need no distinct ids)."""
    return f"{name}-{Path(ctx.output).name}"


def has_log(path: str) -> bool:
    """Whether ``path`` holds a Delta table with at least one commit (``_delta_log/<version>.json``)."""
    log = Path(path) / "_delta_log"
    return log.is_dir() and any(log.glob("*.json"))


def delta_tables(root: str | Path) -> list[Path]:
    """Every Delta table with a commit at or under ``root`` (``root`` itself included), sorted.
    A table's own subdirectories (its partitions) are not searched for further tables."""
    import os

    found = []
    for directory, names, _files in os.walk(root):
        if "_delta_log" in names and has_log(directory):
            found.append(Path(directory))
            names.clear()
        else:
            names.sort()
    return sorted(found)


def read_delta(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """The table's current version, in ``schema``'s columns; an empty frame before the first commit."""
    path = table_path(ctx)
    if not has_log(path):
        return spark.createDataFrame([], schema)
    return spark.read.format("delta").load(path).select(*schema.fieldNames())


def append_with_txn(path: str, txn_app: str) -> ForeachBatch:
    """Append the batch with the writer options ``txnAppId``/``txnVersion`` = (``txn_app``, batch id): Delta
    skips a write whose version is not above the table's txn for the app, so a replayed batch writes nothing.
    Exactly-once."""

    def write(batch_df: DataFrame, batch_id: int) -> None:
        (
            batch_df.write.format("delta")
            .mode("append")
            .option("txnAppId", txn_app)
            .option("txnVersion", str(batch_id))
            .save(path)
        )

    return write


def append_naive(path: str) -> ForeachBatch:
    """Append the batch with no txn options. The bug: a batch Spark replays after its append committed is
    appended again (duplicates)."""

    def write(batch_df: DataFrame, batch_id: int) -> None:
        batch_df.write.format("delta").mode("append").save(path)

    return write


@contextmanager
def session_txn(spark: SparkSession, txn_app: str, batch_id: int) -> Iterator[None]:
    """Delta's session txn confs set to (``txn_app``, ``batch_id``) for the writes inside, unset after them (a
    later write of the session must not carry this batch's version)."""
    try:  # both sets inside: a failed second set must not leave the first behind
        spark.conf.set(TXN_APP_CONF, txn_app)
        spark.conf.set(TXN_VERSION_CONF, str(batch_id))
        yield
    finally:
        spark.conf.unset(TXN_APP_CONF)
        spark.conf.unset(TXN_VERSION_CONF)


def merge_totals(
    path: str, keys: Sequence[str], aggregate: Callable[[DataFrame], DataFrame], add: Sequence[str], txn_app: str | None
) -> ForeachBatch:
    """``MERGE INTO`` the table the batch's ``aggregate`` (one row per ``keys``), adding the ``add`` columns to
    the stored ones where the keys exist and inserting the row where they do not. The merge is not idempotent
    (a replay adds again), so it is exactly-once only with the session txn confs (``txn_app`` given): Delta
    then skips the replayed batch's merge. With ``txn_app=None`` a replay after the merge committed counts
    the batch twice."""

    def write(batch_df: DataFrame, batch_id: int) -> None:
        from delta.tables import DeltaTable

        spark = batch_df.sparkSession
        partial = aggregate(batch_df)
        if not has_log(path):
            # The first batch creates the table (empty, in its own commit without a txn), then merges as any.
            DeltaTable.createIfNotExists(spark).location(path).addColumns(partial.schema).execute()
        on = " AND ".join(f"t.`{k}` <=> s.`{k}`" for k in keys)
        added: dict[str, str | Column] = {c: f"t.`{c}` + s.`{c}`" for c in add}
        merge = (
            DeltaTable.forPath(spark, path)
            .alias("t")
            .merge(partial.alias("s"), on)
            .whenMatchedUpdate(set=added)
            .whenNotMatchedInsertAll()
        )
        if txn_app is None:
            merge.execute()
            return
        with session_txn(spark, txn_app, batch_id):
            merge.execute()

    return write


def deltars_append(path: str, txn_app: str, *, check_first: bool) -> ForeachBatch:
    """Append the batch through delta-rs (``deltalake``, no JVM) with an application transaction (``txn_app``,
    batch id) committed with the data. delta-rs records the txn but does not skip a version it has seen
    (delta-rs #2580): with ``check_first`` the function reads ``transaction_version(txn_app)`` and writes
    nothing for a batch at or below it (exactly-once); without, a replayed batch is appended again."""

    def write(batch_df: DataFrame, batch_id: int) -> None:
        from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

        if check_first and DeltaTable.is_deltatable(path):
            done = DeltaTable(path).transaction_version(txn_app)
            if done is not None and done >= batch_id:
                return
        write_deltalake(
            path,
            batch_df.toArrow(),
            mode="append",
            commit_properties=CommitProperties(app_transactions=[Transaction(app_id=txn_app, version=batch_id)]),
        )

    return write
