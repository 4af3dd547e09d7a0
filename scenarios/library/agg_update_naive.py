"""Per-micro-batch aggregates merged *additively* into SQLite, without a batch-id ledger.

Purpose: a known at-least-once stateful sink, to show the checker catches a
broken one. A common ``foreachBatch`` pattern pre-aggregates each micro-batch
(10-s windows per key: count, sum(value), as ``agg_watermark_update``) and
merges it into a table with ``rows = rows + excluded.rows``. Fault-free that
table equals the aggregation over all input; but the merge is not idempotent
and nothing records which batches were applied, so when Spark replays a batch
whose merge had committed, its counts are added twice. (An update-mode upsert
that *replaces* values, as in ``agg_watermark_update``, survives replays; it is
the accumulation that breaks.)
Faults: SIGKILL at every crash point a ``foreachBatch`` sink reaches: planning,
after ``offsets/N``, in the read tasks, before the function runs, after the
merge committed but before Spark writes ``commits/N`` (``sink.commit.after``:
the replay double-counts batch N), after ``commits/N``.
Guarantee checked: exactly-once, which this sink does *not* give.
Pass condition for the harness: after a ``sink.commit.after`` kill of a batch
with data the run is flagged (a group's aggregate differs from the oracle);
fault-free it matches.
Requirements: none (SQLite is in Python's standard library). The streaming
query itself is stateless (one partition kept for comparability).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.plan import ALL_CRASH_POINTS
from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import OracleContext, Scenario, SinkContext
from scenarios.library.agg_watermark_append import GROUP, aggregate
from scenarios.library.agg_watermark_update import TABLE, ensure_table, quote, read_table
from scenarios.presets import EVENT_TIME
from scenarios.sinks._sql import encode_row
from scenarios.sinks.sqlite_upsert import connect

if TYPE_CHECKING:
    import sqlite3

    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType


def merge_additively(
    conn: sqlite3.Connection, schema: StructType, keys: Sequence[str], rows: Iterable[Any], add: Sequence[str]
) -> None:
    """In one transaction, insert ``rows``; where ``keys`` exist, add the ``add``
    columns to the stored values. Deliberately without a batch-id check."""
    names = [f.name for f in schema.fields]
    updates = ", ".join(f"{quote(n)} = {quote(n)} + excluded.{quote(n)}" for n in add)
    sql = (
        f"INSERT INTO {TABLE} ({', '.join(map(quote, names))}) VALUES ({', '.join('?' * len(names))}) "
        f"ON CONFLICT ({', '.join(map(quote, keys))}) DO UPDATE SET {updates}"
    )
    conn.execute("BEGIN IMMEDIATE")
    try:
        ensure_table(conn, schema, keys)
        conn.executemany(sql, (encode_row(r, schema, "sqlite") for r in rows))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def pre_aggregate_and_add(db_path: Path) -> Callable[[DataFrame, int], None]:
    """A ``foreachBatch`` function: :func:`aggregate` of the micro-batch, merged additively."""

    def write(batch_df: DataFrame, batch_id: int) -> None:
        partial = aggregate(batch_df)
        conn = connect(db_path)
        try:
            merge_additively(conn, partial.schema, GROUP, partial.toLocalIterator(), ("rows", "value_sum"))
        finally:
            conn.close()

    return write


def passthrough(df: DataFrame) -> DataFrame:
    """The streaming query only selects the columns the sink aggregates."""
    return df.select("key", "value", "event_time")


def database(ctx: SinkContext) -> Path:
    return Path(ctx.output) / "sink.sqlite3"


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.foreachBatch(crash_injecting_foreach_batch(pre_aggregate_and_add(database(ctx)), ctx.faults))


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame(read_table(database(ctx)), schema)


def all_windows(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    """Every window's aggregate over all input (what the table should hold)."""
    return aggregate(batch_input)


SCENARIO = Scenario(
    name="agg_update_naive",
    summary="per-batch window aggregates added into SQLite without batch-id dedup (expected: over-count on replay)",
    guarantee="at-least-once",
    # The streaming query is stateless (no no-data batches): every crash point of a ``foreachBatch`` sink.
    kill_points=ALL_CRASH_POINTS,
    sink_steps=True,
    transform=passthrough,
    attach_sink=attach_sink,
    read_output=read_output,
    identity=GROUP,
    oracle=all_windows,
    **EVENT_TIME,
)
