"""A ``foreachBatch`` Delta upsert to copy: ``MERGE INTO`` keyed by the rows' identity, under Delta's txn confs.

Use::

    query = df.writeStream.foreachBatch(delta_upsert("/data/table")).option("checkpointLocation", ...).start()
    rows = read_back("/data/table")  # what readers see, without Spark

Contract of :func:`delta_upsert`'s function ``fn(batch_df, batch_id)``:

- The first batch creates the table at ``path`` if it is absent (an empty table, in a commit of its own).
- Every batch is one ``MERGE INTO`` the table on the key columns: a stored row with the same key is replaced
  by the batch's row (``whenMatchedUpdateAll``), a new key is inserted (``whenNotMatchedInsertAll``).
- The merge runs with the session confs ``spark.databricks.delta.write.txnAppId`` / ``txnVersion`` =
  (app id, batch id), set just around it and unset after it (:func:`scenarios.delta.sinks.session_txn`).
- When Delta skipped the merge (the batch id is committed already: a replay), the batch's plan is still run,
  into Spark's ``noop`` sink (:func:`scenarios.sinks._sql.run_without_writing`): see "Stateful queries".

Why it is exactly-once. Spark re-runs a batch whose ``offsets/N`` is in the checkpoint but whose
``commits/N`` is not, with the same id and the same offsets: after a crash anywhere between the merge's
commit and ``commits/N`` the table has seen the batch already. Three things make that replay harmless:

- **Delta's atomic commit.** A merge is visible only once its log entry ``_delta_log/<v>.json`` exists; the
  files of a merge killed before it are never referenced. So readers see a batch wholly or not at all.
- **The txn confs.** The merge's commit also records ``SetTransaction(app id, batch id)``, in the same log
  entry. Before merging, Delta compares the batch id with the version recorded for the app id and skips the
  merge (no commit at all) when it is not higher. So a replayed batch is a no-op, whatever its rows. Over the
  key alone this buys: no new table version on a replay (streaming and change-feed readers of this table see
  no rewrite, no file is rewritten), and a replay whose rows differ (a non-deterministic transform, a source
  that cannot read the same rows twice) leaves the committed attempt as it is.
- **The key.** A merge keyed by the rows' identity is idempotent by content: if the txn did not skip a
  replay (the app id changed because the table moved or ``app_id`` was changed, or Delta dropped old txn ids
  after ``delta.setTransactionRetentionDuration``), re-merging the same rows replaces them with themselves.
  And it is what makes the function an upsert: a key that comes again in a later batch updates its row.

The app id. Delta keeps txn versions per table and per app id, and the version must grow with every batch of
one writer, across restarts. ``foreachBatch`` gets neither the query id nor the checkpoint location, and the
factory runs anew in every driver (a random id would change on restart), so by default the app id is derived
from the table's path (``delta_upsert-`` + 16 hex digits of its SHA-256): the same for every restart of the
query, different for every table, short. Limit: **one query per table** with the default. A second query, or
the same query restarted with a new checkpoint (batch ids start again at 0), writing the same table under the
same app id has every batch up to the table's recorded version silently skipped (lost rows). Give such a
query its own ``app_id`` (say, a hash of its checkpoint location).

Stateful queries. A merge Delta skips never reads its source, so the replayed batch's plan does not run and
its state stores do not commit; Spark 4 then fails the query (``STATE_STORE_COMMIT_VALIDATION_FAILED``,
SPARK-52008), on every restart that replays a batch. Measured: ``dropDuplicates`` with a watermark into this
merge without the ``noop`` run, SIGKILL at ``sink.commit.after``: the restarted query failed so. The function
tells a skipped merge by its result: ``execute()`` returns one row of metrics when the merge ran (zero counts
for an empty batch too) and no row when the txn skipped it (Delta 4.4, measured). Were a later Delta to return
a row on a skip, a stateful query would fail loudly as above, never lose or duplicate rows.

Other limits: the keys must be unique within a batch (two batch rows matching one stored row fail the merge;
two new rows with one key are both inserted). The confs are set on ``batch_df.sparkSession``, the query's own
session (Spark clones it per query): other queries are not affected, and the merge reads them from there.

:func:`delta_append_naive` is the **broken** twin the harness must catch: a plain append, no txn.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from scenarios.delta.sinks import session_txn
from scenarios.sinks._sql import run_without_writing

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ForeachBatch = Callable[["DataFrame", int], None]

#: The key of check-sink's rows (the replayable source's provenance): ``(partition, offset, seq)``.
DEFAULT_KEYS = ("partition", "offset", "seq")
APP_ID_PREFIX = "delta_upsert-"


def canonical_path(path: str) -> str:
    """``path`` as one spelling per table: a URI (``s3://...``) without trailing ``/``; a local path absolute,
    normalised (``a/./b/`` and ``a/b`` are one table)."""
    if "://" in path:
        return path.rstrip("/")
    return os.path.abspath(path)


def default_app_id(path: str) -> str:
    """The txn app id of the table at ``path``: ``delta_upsert-`` + the first 16 hex digits of the SHA-256 of
    :func:`canonical_path`. Stable across processes and restarts; one per table."""
    digest = hashlib.sha256(canonical_path(path).encode("utf-8")).hexdigest()
    return APP_ID_PREFIX + digest[:16]


def key_columns(keys: str | Sequence[str]) -> tuple[str, ...]:
    """Key columns from a sequence or a comma-separated string (``--options keys=a,b``). ``ValueError``: none."""
    names = tuple(k.strip() for k in (keys.split(",") if isinstance(keys, str) else keys) if k.strip())
    if not names:
        raise ValueError("delta_upsert: keys names no column; give the columns that identify a row")
    return names


def merge_condition(keys: Sequence[str]) -> str:
    """The merge's ``ON``: target ``t`` and source ``s`` equal on every key, null-safe (``<=>``), so a replayed
    row with a null key still matches itself."""
    return " AND ".join(f"t.`{k}` <=> s.`{k}`" for k in keys)


def table_properties(options: dict[str, str]) -> dict[str, str]:
    """The factory's extra options: Delta table properties (``delta.*``) for the table the first batch creates.
    ``ValueError`` names any other option (a typo should not pass silently)."""
    wrong = sorted(k for k in options if not k.startswith("delta."))
    if wrong:
        raise ValueError(
            f"delta_upsert: unknown option(s) {wrong}; options other than app_id and keys are Delta table "
            "properties and start with 'delta.' (e.g. delta.enableChangeDataFeed=true)"
        )
    return dict(options)


def delta_upsert(
    path: str, app_id: str | None = None, keys: str | Sequence[str] = DEFAULT_KEYS, **options: str
) -> ForeachBatch:
    """A ``foreachBatch`` function that upserts each batch into the Delta table at ``path``, exactly once.

    ``app_id``: the txn app id (default :func:`default_app_id` of ``path``; see the module docstring).
    ``keys``: the columns identifying a row (default ``partition, offset, seq``). ``options``: table
    properties (``delta.*``) set when the first batch creates the table."""
    txn_app = app_id or default_app_id(path)
    on = merge_condition(key_columns(keys))
    properties = table_properties(options)

    def upsert(batch_df: DataFrame, batch_id: int) -> None:
        from delta.tables import DeltaTable

        spark = batch_df.sparkSession  # the query's session: the merge reads the txn confs from it
        if not DeltaTable.isDeltaTable(spark, path):
            builder = DeltaTable.createIfNotExists(spark).location(path).addColumns(batch_df.schema)
            for name, value in properties.items():
                builder = builder.property(name, value)
            builder.execute()  # an empty table; a replay after this commit merges as any batch does
        merge = (
            DeltaTable.forPath(spark, path)
            .alias("t")
            .merge(batch_df.alias("s"), on)
            .whenMatchedUpdateAll()
            .whenNotMatchedInsertAll()
        )
        with session_txn(spark, txn_app, batch_id):
            metrics = merge.execute()  # the commit point: rows and SetTransaction(txn_app, batch_id) in one entry
        if not metrics.collect():  # no metrics row: Delta skipped a batch it had committed (Spark replays it)
            run_without_writing(batch_df)  # its plan must still run, or a stateful query fails

    return upsert


def delta_append_naive(path: str) -> ForeachBatch:
    """BROKEN on purpose: append the batch to the Delta table at ``path`` with no txn and no key.

    Each append is atomic, but a batch Spark replays after its append committed (a crash before
    ``commits/N``) is appended again: duplicates. ``check-sink`` must fail it (``crash-points`` at
    ``sink.commit.after``, ``crash-anywhere`` after the ``save`` step)."""

    def append(batch_df: DataFrame, batch_id: int) -> None:
        batch_df.write.format("delta").mode("append").save(path)

    return append


def read_back(path: str) -> list[dict[str, Any]]:
    """The rows of the table's current version at ``path``, read without Spark (delta-rs); ``[]`` when there is
    no table yet. Only committed versions are read: files of an interrupted merge are not seen."""
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(path):
        return []
    return DeltaTable(path).to_pyarrow_table().to_pylist()  # type: ignore[no-any-return]
