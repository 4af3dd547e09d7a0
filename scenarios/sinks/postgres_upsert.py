"""A reference ``foreachBatch`` sink: idempotent upsert into PostgreSQL, keyed by batch id.

The same protocol as :mod:`scenarios.sinks.sqlite_upsert`, against a real
server with ``psycopg`` (3). In one transaction:

1. ``INSERT INTO <table>_batches (batch_id) ... ON CONFLICT DO NOTHING RETURNING``:
   no row returned means the batch was committed before (Spark is replaying
   it), so the transaction ends with nothing changed. The new key also locks
   the batch: a concurrent second writer of the same batch waits, then sees it.
2. ``COPY`` the batch's rows into ``<table>`` (with column ``_batch_id``), rows
   reaching the driver one Spark partition at a time (``toLocalIterator``).
3. Record the row count; ``COMMIT``.

If the driver dies before ``COMMIT`` its connection drops and the server rolls
the transaction back: rows and batch id appear together or not at all.

Usage::

    df.writeStream.foreachBatch(upsert_into_postgres("host=... dbname=...")).option("checkpointLocation", ...).start()
    rows = read_postgres("host=... dbname=...")

One streaming query (one checkpoint) per table: a new checkpoint restarts
batch ids at 0 and needs a new table. :func:`throwaway_postgres` (re-exported
from :mod:`scenarios.sinks.pg_cluster`) starts a disposable server for tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.sinks._sql import BATCH_COLUMN, column_types, encode_row, run_without_writing
from scenarios.sinks.pg_cluster import throwaway_postgres

if TYPE_CHECKING:
    import psycopg
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

__all__ = [
    "committed_batches",
    "postgres_sink_at",
    "read_postgres",
    "read_postgres_at",
    "throwaway_postgres",
    "upsert_into_postgres",
    "write_batch",
]

DEFAULT_TABLE = "rows"


def connect(dsn: str) -> psycopg.Connection[Any]:
    """An autocommit connection (transactions are explicit blocks) in time zone UTC."""
    import psycopg

    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("SET TIME ZONE 'UTC'")
    return conn


def _ensure_tables(conn: psycopg.Connection[Any], table: str, schema: StructType) -> None:
    from psycopg import sql

    columns = [*column_types(schema, "postgres"), (BATCH_COLUMN, "bigint not null")]
    conn.execute(
        sql.SQL("CREATE TABLE IF NOT EXISTS {} ({})").format(
            sql.Identifier(table),
            sql.SQL(", ").join(sql.SQL("{} {}").format(sql.Identifier(n), sql.SQL(t)) for n, t in columns),
        )
    )
    conn.execute(
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {} (batch_id bigint PRIMARY KEY, rows bigint, committed_at timestamptz)"
        ).format(sql.Identifier(table + "_batches"))
    )


def write_batch(
    conn: psycopg.Connection[Any], table: str, schema: StructType, rows: Iterable[Any], batch_id: int
) -> bool:
    """Insert ``rows`` of ``batch_id`` unless that batch is already in the
    table, in one transaction. Returns ``True`` if it inserted, ``False`` for a
    replayed batch (nothing changed; ``rows`` is not iterated)."""
    from psycopg import sql

    batches = sql.Identifier(table + "_batches")
    with conn.transaction():
        _ensure_tables(conn, table, schema)
        claim = sql.SQL("INSERT INTO {} (batch_id) VALUES (%s) ON CONFLICT (batch_id) DO NOTHING RETURNING batch_id")
        claimed = conn.execute(claim.format(batches), (batch_id,)).fetchone()
        if claimed is None:
            return False
        names = [f.name for f in schema.fields] + [BATCH_COLUMN]
        copy_sql = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, names))
        )
        count = 0
        with conn.cursor() as cur, cur.copy(copy_sql) as copy:
            for row in rows:
                copy.write_row((*encode_row(row, schema, "postgres"), batch_id))
                count += 1
        conn.execute(
            sql.SQL("UPDATE {} SET rows = %s, committed_at = now() WHERE batch_id = %s").format(batches),
            (count, batch_id),
        )
    return True


def upsert_into_postgres(dsn: str, table: str = DEFAULT_TABLE) -> Callable[[DataFrame, int], None]:
    """A ``foreachBatch`` function writing each batch into ``table`` of the
    PostgreSQL database ``dsn`` exactly once (see the module docstring); a
    replayed batch is computed but not written (see :func:`run_without_writing`)."""

    def upsert_batch(batch_df: DataFrame, batch_id: int) -> None:
        def rows() -> Iterator[Any]:  # lazy: write_batch decides whether to read the batch
            yield from batch_df.toLocalIterator()

        with connect(dsn) as conn:
            applied = write_batch(conn, table, batch_df.schema, rows(), batch_id)
        if not applied:
            run_without_writing(batch_df)

    upsert_batch.__qualname__ = f"upsert_into_postgres(<dsn>, {table!r})"
    return upsert_batch


def _exists(conn: psycopg.Connection[Any], table: str) -> bool:
    row = conn.execute("SELECT to_regclass(%s)", (f'"{table}"',)).fetchone()
    return row is not None and row[0] is not None


def committed_batches(dsn: str, table: str = DEFAULT_TABLE) -> list[int]:
    """Batch ids whose rows are in ``table``, ascending."""
    from psycopg import sql

    with connect(dsn) as conn:
        if not _exists(conn, table + "_batches"):
            return []
        query = sql.SQL("SELECT batch_id FROM {} ORDER BY batch_id").format(sql.Identifier(table + "_batches"))
        return [int(r[0]) for r in conn.execute(query)]


def read_postgres(dsn: str, table: str = DEFAULT_TABLE) -> list[dict[str, Any]]:
    """The rows readers of ``table`` see (committed batches only), without
    ``_batch_id``; timestamps timezone-aware. Missing table: ``[]``."""
    from psycopg import sql
    from psycopg.rows import dict_row

    with connect(dsn) as conn:
        if not _exists(conn, table):
            return []
        names = [
            r[0]
            for r in conn.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
                (table,),
            )
            if r[0] != BATCH_COLUMN
        ]
        query = sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
            sql.SQL(", ").join(map(sql.Identifier, names)), sql.Identifier(table), sql.Identifier(BATCH_COLUMN)
        )
        with conn.cursor(row_factory=dict_row) as cur:
            return list(cur.execute(query))


def _table_at(path: str) -> str:
    import hashlib

    return "rows_" + hashlib.sha1(str(Path(path).resolve()).encode()).hexdigest()[:16]


def postgres_sink_at(path: str, dsn: str) -> Callable[[DataFrame, int], None]:
    """``check-sink``'s factory form of :func:`upsert_into_postgres`: ``factory(path, dsn=...)``. Each sink
    ``path`` (one per run) gets its own table; the DSN is kept in ``path/dsn`` (mode 0600) so that
    :func:`read_postgres_at` finds the server. Use a throw-away server (its password lands in that file)::

        python -m harness check-sink scenarios/sinks/postgres_upsert.py:postgres_sink_at \\
            --read-back scenarios/sinks/postgres_upsert.py:read_postgres_at --options dsn=postgresql://...
    """
    where = Path(path)
    where.mkdir(parents=True, exist_ok=True)
    (where / "dsn").write_text(dsn)
    (where / "dsn").chmod(0o600)
    return upsert_into_postgres(dsn, _table_at(path))


def read_postgres_at(path: str) -> list[dict[str, Any]]:
    """The rows readers of :func:`postgres_sink_at`'s table for ``path`` see (``[]`` before its first batch)."""
    dsn_file = Path(path) / "dsn"
    return read_postgres(dsn_file.read_text(), _table_at(path)) if dsn_file.exists() else []
