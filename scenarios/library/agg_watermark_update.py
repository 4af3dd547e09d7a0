"""Windowed aggregation with a watermark, update mode, into an idempotent SQLite upsert.

Purpose: update mode writes every group a batch changed, with its aggregate so
far, so a sink keeps the last value per group. Here a ``foreachBatch``
function upserts each batch's rows into SQLite keyed by the group columns
(``window_start``, ``window_end``, ``key``) and records the batch id, all in
one transaction; a batch id already recorded makes the replay write nothing
(the replayed batch is still computed: Spark 4 fails a stateful query whose
``foreachBatch`` leaves a state store uncommitted, see :func:`upsert_by_group`).
Same aggregation as ``agg_watermark_append`` (10-s windows, 5-s watermark).
Faults: SIGKILL while planning (``source.latest_offset``), before the function
runs and after it committed but before Spark writes ``commits/N``
(``sink.commit.before|after``), after ``commits/N``. No-data batches are on
(Spark's default; they advance the watermark and evict state after each run),
and Spark calls the function for them too, with no rows, so every point is
reached whatever the batch (see ``EVERY_BATCH_POINTS`` for the ones left out).
Guarantee checked: exactly-once: the table holds, per group, the aggregate of
exactly the input rows of that window and key. (A plain upsert keyed by group
would survive a replay too, since a replayed batch rewrites the same final
values; the batch-id ledger also keeps a replay from undoing a later batch if
the sink were ever shared. ``agg_update_naive`` shows a sink that is not
replay-safe.)
Pass condition: the table equals, as a multiset, the batch aggregation over
all input (every window: update mode emits open windows too, and eviction
removes state, not sink rows).
Requirements: none (SQLite is in Python's standard library); one source
partition and jitter below the watermark delay, as in ``agg_watermark_append``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import OracleContext, Scenario, SinkContext
from scenarios.library.agg_watermark_append import GROUP, aggregate
from scenarios.presets import EVENT_TIME
from scenarios.sinks._sql import column_types, decode_sqlite, encode_row
from scenarios.sinks.sqlite_upsert import connect

if TYPE_CHECKING:
    import sqlite3

    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

TABLE = "aggregates"
#: Crash points reached in data and no-data batches alike, by a kill or a raised exception: no-data batches
#: stay on here, and in them Spark calls no source method between ``offsets/N`` and ``commits/N`` (so
#: ``after_offsets_logged`` could only be reached by the checkpoint watcher, which cannot raise, and the
#: read-task points not at all), while ``foreachBatch`` is called for every batch.
EVERY_BATCH_POINTS = (
    "source.latest_offset",
    "sink.commit.before",
    "sink.commit.after",
    "after_commit_logged",
)


def quote(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def ensure_table(conn: sqlite3.Connection, schema: StructType, keys: Sequence[str]) -> None:
    """Create the data table (primary key ``keys``) and the batch ledger if missing."""
    cols = ", ".join(f"{quote(n)} {t}" for n, t in column_types(schema, "sqlite"))
    conn.execute(f"CREATE TABLE IF NOT EXISTS {TABLE} ({cols}, PRIMARY KEY ({', '.join(map(quote, keys))}))")
    conn.execute(f"CREATE TABLE IF NOT EXISTS {TABLE}_batches (batch_id INTEGER PRIMARY KEY)")


def upsert_batch(
    conn: sqlite3.Connection, schema: StructType, keys: Sequence[str], rows: Iterable[Any], batch_id: int
) -> bool:
    """In one transaction: unless ``batch_id`` is in the ledger, upsert ``rows``
    (a row whose ``keys`` exist replaces the old values) and record ``batch_id``.
    Returns ``False`` for a replayed batch (nothing changed, ``rows`` untouched)."""
    names = [f.name for f in schema.fields]
    updates = ", ".join(f"{quote(n)} = excluded.{quote(n)}" for n in names if n not in keys)
    sql = (
        f"INSERT INTO {TABLE} ({', '.join(map(quote, names))}) VALUES ({', '.join('?' * len(names))}) "
        f"ON CONFLICT ({', '.join(map(quote, keys))}) DO UPDATE SET {updates}"
    )
    conn.execute("BEGIN IMMEDIATE")
    try:
        ensure_table(conn, schema, keys)
        if conn.execute(f"SELECT 1 FROM {TABLE}_batches WHERE batch_id = ?", (batch_id,)).fetchone():
            conn.execute("ROLLBACK")
            return False
        conn.executemany(sql, (encode_row(r, schema, "sqlite") for r in rows))
        conn.execute(f"INSERT INTO {TABLE}_batches (batch_id) VALUES (?)", (batch_id,))
        conn.execute("COMMIT")
        return True
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def upsert_by_group(db_path: Path, keys: Sequence[str]) -> Callable[[DataFrame, int], None]:
    """A ``foreachBatch`` function applying :func:`upsert_batch` to each batch.

    A replayed batch is still *computed*, only not written: Spark 4 checks that
    every state store of a stateful query committed in each batch and fails the
    query otherwise (``STATE_STORE_COMMIT_VALIDATION_FAILED``, SPARK-52008), so a
    function that returns early on a known batch id stops a stateful query for
    good: every restart replays that batch again."""

    def write(batch_df: DataFrame, batch_id: int) -> None:
        conn = connect(db_path)
        try:
            applied = upsert_batch(conn, batch_df.schema, keys, batch_df.toLocalIterator(), batch_id)
        finally:
            conn.close()
        if not applied:
            batch_df.write.format("noop").mode("overwrite").save()  # run the plan, commit state, write nothing

    return write


def read_table(db_path: Path) -> list[dict[str, Any]]:
    """The data table's rows (timestamps timezone-aware); ``[]`` before the first batch."""
    if not db_path.exists():
        return []
    conn = connect(db_path)
    try:
        info = [(r[1], r[2]) for r in conn.execute(f"PRAGMA table_info({TABLE})")]
        if not info:
            return []
        cur = conn.execute(f"SELECT {', '.join(quote(n) for n, _ in info)} FROM {TABLE}")
        return [{n: decode_sqlite(v, t) for (n, t), v in zip(info, row, strict=True)} for row in cur]
    finally:
        conn.close()


def database(ctx: SinkContext) -> Path:
    return Path(ctx.output) / "sink.sqlite3"


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    fn = upsert_by_group(database(ctx), GROUP)
    return writer.outputMode("update").foreachBatch(crash_injecting_foreach_batch(fn, ctx.faults))


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame(read_table(database(ctx)), schema)


def final_aggregates(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    """Last value per group = the aggregate over all input of every window."""
    return aggregate(batch_input)


SCENARIO = Scenario(
    name="agg_watermark_update",
    summary="10 s windowed count/sum, watermark, update mode -> foreachBatch SQLite upsert (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=EVERY_BATCH_POINTS,
    sink_steps=True,
    transform=aggregate,
    attach_sink=attach_sink,
    read_output=read_output,
    identity=GROUP,
    oracle=final_aggregates,
    stateful=True,
    **EVENT_TIME,
)
