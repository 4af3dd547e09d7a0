"""A reference ``foreachBatch`` sink: idempotent upsert into SQLite, keyed by batch id.

Spark re-runs a micro-batch whose ``commits/N`` it did not write (the driver
died after the sink finished), with the same offsets and hence the same rows.
A ``foreachBatch`` function is exactly-once only if that replay is a no-op.
Here, in **one** SQLite transaction (``BEGIN IMMEDIATE``, so concurrent writers
queue up): if the batch id is in table ``<table>_batches`` nothing happens;
otherwise the batch's rows go into ``<table>`` (with column ``_batch_id``) and
the batch id into ``<table>_batches``; then ``COMMIT``. A crash anywhere before
``COMMIT`` rolls the transaction back (SQLite's journal), so the rows and the
batch id become visible together or not at all.

Usage::

    query = df.writeStream.foreachBatch(upsert_into_sqlite("/data/sink.db")).option("checkpointLocation", ...).start()
    rows = read_sqlite("/data/sink.db")

One streaming query (one checkpoint) per table: batch ids restart at 0 with a
new checkpoint, so a new checkpoint needs a new table (or database).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.sinks._sql import BATCH_COLUMN, column_types, decode_sqlite, encode_row, run_without_writing

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

DEFAULT_TABLE = "rows"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def connect(db_path: str | Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) with full fsync."""
    Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(db_path), isolation_level=None, timeout=60.0)
    conn.execute("PRAGMA synchronous=FULL")
    return conn


def _ensure_tables(conn: sqlite3.Connection, table: str, schema: StructType) -> None:
    columns = [*column_types(schema, "sqlite"), (BATCH_COLUMN, "INTEGER NOT NULL")]
    conn.execute(f"CREATE TABLE IF NOT EXISTS {_q(table)} ({', '.join(f'{_q(n)} {t}' for n, t in columns)})")
    existing = [(r[1], r[2]) for r in conn.execute(f"PRAGMA table_info({_q(table)})")]
    if existing != [(n, t.split()[0]) for n, t in columns]:
        raise ValueError(
            f"sqlite upsert sink: table {table!r} exists with columns {existing}, but the query writes "
            f"{[(n, t.split()[0]) for n, t in columns]}; use a new table name or drop the old table"
        )
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {_q(table + '_batches')} "
        "(batch_id INTEGER PRIMARY KEY, rows INTEGER NOT NULL, committed_at_ns INTEGER NOT NULL)"
    )


def write_batch(conn: sqlite3.Connection, table: str, schema: StructType, rows: Iterable[Any], batch_id: int) -> bool:
    """Insert ``rows`` of ``batch_id`` unless that batch is already in the table,
    all in one transaction. Returns ``True`` if it inserted, ``False`` for a
    replayed batch (nothing changed; ``rows`` is not even iterated)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        _ensure_tables(conn, table, schema)
        seen = conn.execute(f"SELECT 1 FROM {_q(table + '_batches')} WHERE batch_id = ?", (batch_id,)).fetchone()
        if seen is not None:
            conn.execute("ROLLBACK")
            return False
        names = [f.name for f in schema.fields] + [BATCH_COLUMN]
        insert = f"INSERT INTO {_q(table)} ({', '.join(map(_q, names))}) VALUES ({', '.join('?' * len(names))})"
        cur = conn.executemany(insert, ((*encode_row(r, schema, "sqlite"), batch_id) for r in rows))
        count = max(cur.rowcount, 0)
        conn.execute(
            f"INSERT INTO {_q(table + '_batches')} (batch_id, rows, committed_at_ns) VALUES (?, ?, ?)",
            (batch_id, count, time.time_ns()),
        )
        conn.execute("COMMIT")
        return True
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def upsert_into_sqlite(db_path: str | Path, table: str = DEFAULT_TABLE) -> Callable[[DataFrame, int], None]:
    """A ``foreachBatch`` function writing each batch into ``table`` of the
    SQLite database ``db_path`` exactly once (see the module docstring).
    Rows reach the driver one Spark partition at a time (``toLocalIterator``);
    a replayed batch is computed but not written (see :func:`run_without_writing`)."""

    def upsert_batch(batch_df: DataFrame, batch_id: int) -> None:
        def rows() -> Iterator[Any]:  # lazy: write_batch decides whether to read the batch
            yield from batch_df.toLocalIterator()

        conn = connect(db_path)
        try:
            applied = write_batch(conn, table, batch_df.schema, rows(), batch_id)
        finally:
            conn.close()
        if not applied:
            run_without_writing(batch_df)

    upsert_batch.__qualname__ = f"upsert_into_sqlite({str(db_path)!r}, {table!r})"
    return upsert_batch


def committed_batches(db_path: str | Path, table: str = DEFAULT_TABLE) -> list[int]:
    """Batch ids whose rows are in ``table``, ascending."""
    if not Path(db_path).exists():
        return []
    conn = connect(db_path)
    try:
        if not _exists(conn, table + "_batches"):
            return []
        return [r[0] for r in conn.execute(f"SELECT batch_id FROM {_q(table + '_batches')} ORDER BY batch_id")]
    finally:
        conn.close()


def _exists(conn: sqlite3.Connection, table: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    return row is not None


def read_sqlite(db_path: str | Path, table: str = DEFAULT_TABLE) -> list[dict[str, Any]]:
    """The rows readers of ``table`` see (committed batches only), without
    ``_batch_id``; timestamps timezone-aware. Missing database or table: ``[]``."""
    if not Path(db_path).exists():
        return []
    conn = connect(db_path)
    try:
        if not _exists(conn, table):
            return []
        columns = [(r[1], r[2]) for r in conn.execute(f"PRAGMA table_info({_q(table)})") if r[1] != BATCH_COLUMN]
        names = ", ".join(_q(n) for n, _ in columns)
        cur = conn.execute(f"SELECT {names} FROM {_q(table)} ORDER BY {_q(BATCH_COLUMN)}, rowid")
        return [{n: decode_sqlite(v, t) for (n, t), v in zip(columns, r, strict=True)} for r in cur]
    finally:
        conn.close()
