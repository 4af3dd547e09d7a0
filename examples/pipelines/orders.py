"""A user's own pipeline, tested as it is: JSON order events with a nested struct, parsed and
aggregated into running revenue per country in SQLite.

The pipeline code (:data:`SCHEMA`, :func:`paid_orders`, :func:`revenue_totals`) is what a team
writes for a directory of JSON files, ``spark.readStream.schema(SCHEMA).json(path)``; nothing in it
knows the harness. The harness side is the last part of the module: a row function that makes
deterministic events (:func:`order`), and scenarios that feed the pipeline

- from Spark's JSON file source over a directory the harness fills (:data:`SCENARIO`), and
- from the replayable source with the same schema (:data:`REPLAYABLE_SCENARIO`),

then kill the driver's process group at named points and compare the totals with the same
aggregation over exactly the input the harness published.

:func:`revenue_totals` adds each batch's totals and records the batch id **in one transaction**,
so a batch Spark replays after a kill is skipped: exactly-once. Its one-bug twin
:func:`revenue_totals_no_marker` adds without the marker: a kill after its commit and before
Spark's ``commits/N`` makes Spark replay the batch, and the totals count it twice. The harness
reports ``wrong-value`` rows (``BROKEN_SCENARIO``, ``BROKEN_REPLAYABLE_SCENARIO``).

Run them::

    .venv/bin/python -m harness run examples.pipelines.orders:SCENARIO --seed 1 --kills 3
    .venv/bin/python -m harness run examples.pipelines.orders:BROKEN_SCENARIO --seed 1 \\
        --kill sink.commit.after:1
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios import FileDirectory, Replayable, Rows, Scenario, SinkContext
from scenarios.rowgen import splitmix64

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

# -- the user's pipeline, unchanged ---------------------------------------------------------------------
SCHEMA = "order_id STRING, customer STRUCT<id: INT, country: STRING>, amount_cents BIGINT, status STRING, ts TIMESTAMP"


def paid_orders(events: DataFrame) -> DataFrame:
    """Parse the events: paid orders only, the customer's country out of the nested struct."""
    return events.where(F.col("status") == "paid").select(
        "order_id", F.col("customer.country").alias("country"), "amount_cents"
    )


def per_country(orders: DataFrame) -> DataFrame:
    """Orders and revenue per country."""
    return orders.groupBy("country").agg(
        F.count(F.lit(1)).alias("orders"), F.sum("amount_cents").alias("revenue_cents")
    )


def _connect(db: Path) -> sqlite3.Connection:
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(db), isolation_level=None, timeout=60.0)
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS totals (country TEXT PRIMARY KEY, orders INTEGER, revenue_cents INTEGER)")
    conn.execute("CREATE TABLE IF NOT EXISTS batches (batch_id INTEGER PRIMARY KEY)")
    return conn


def _add(conn: sqlite3.Connection, rows: list[Any]) -> None:
    conn.executemany(
        "INSERT INTO totals VALUES (?, ?, ?) ON CONFLICT(country) DO UPDATE SET "
        "orders = orders + excluded.orders, revenue_cents = revenue_cents + excluded.revenue_cents",
        [(r["country"], r["orders"], r["revenue_cents"]) for r in rows],
    )


def revenue_totals(db: Path) -> Callable[[DataFrame, int], None]:
    """foreachBatch: add the batch's totals per country, once per batch id (one transaction)."""

    def add_batch(batch_df: DataFrame, batch_id: int) -> None:
        rows = per_country(batch_df).collect()
        conn = _connect(db)
        try:
            conn.execute("BEGIN IMMEDIATE")
            if conn.execute("SELECT 1 FROM batches WHERE batch_id = ?", (batch_id,)).fetchone():
                conn.execute("ROLLBACK")
                return
            _add(conn, rows)
            conn.execute("INSERT INTO batches VALUES (?)", (batch_id,))
            conn.execute("COMMIT")
        finally:
            conn.close()

    return add_batch


def revenue_totals_no_marker(db: Path) -> Callable[[DataFrame, int], None]:
    """The one-bug twin of :func:`revenue_totals`: no batch-id marker, so a replayed batch adds again."""

    def add_batch(batch_df: DataFrame, batch_id: int) -> None:
        rows = per_country(batch_df).collect()
        conn = _connect(db)
        try:
            conn.execute("BEGIN IMMEDIATE")
            _add(conn, rows)
            conn.execute("COMMIT")
        finally:
            conn.close()

    return add_batch


def read_totals(db: Path) -> list[dict[str, Any]]:
    """What readers of the totals table see."""
    if not db.exists():
        return []
    conn = _connect(db)
    try:
        cur = conn.execute("SELECT country, orders, revenue_cents FROM totals")
        return [dict(zip(("country", "orders", "revenue_cents"), r, strict=True)) for r in cur]
    finally:
        conn.close()


# -- the harness side -------------------------------------------------------------------------------------
COUNTRIES = ("DE", "FR", "NL", "PL", "SE")
STATUSES = ("paid", "paid", "paid", "refunded", "pending")


def order(seed: int, partition: int, offset: int, seq: int) -> dict[str, Any]:
    """One order event, a pure function of its position (same event in every run and process)."""
    h = splitmix64(splitmix64(splitmix64(splitmix64(seed) ^ partition) ^ offset) ^ seq)
    return {
        "order_id": f"o-{partition}-{offset}-{seq}",
        "customer": {"id": h % 1000, "country": COUNTRIES[(h >> 10) % len(COUNTRIES)]},
        "amount_cents": 100 + (h >> 20) % 10_000,
        "status": STATUSES[(h >> 40) % len(STATUSES)],
        "ts": datetime.fromtimestamp(1_700_000_000 + offset, tz=UTC),
    }


ROWS = Rows(SCHEMA, order)


def _database(ctx: SinkContext) -> Path:
    return Path(ctx.output) / "totals.sqlite3"


def _attach(make: Callable[[Path], Callable[[DataFrame, int], None]]) -> Any:
    def attach(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
        return writer.foreachBatch(crash_injecting_foreach_batch(make(_database(ctx)), ctx.faults))

    return attach


def _read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame(read_totals(_database(ctx)), schema)


def _oracle(batch_input: DataFrame, ctx: Any) -> DataFrame:
    return per_country(paid_orders(batch_input))


#: Kill points a foreachBatch sink over Spark's file source reaches (the watcher fires the checkpoint's).
FILE_POINTS = ("after_offsets_logged", "sink.commit.before", "sink.commit.after", "after_commit_logged")
#: With the replayable source, its own points too (``sink.write.*`` fire in its read tasks).
REPLAYABLE_POINTS = ("source.latest_offset", "source.read", "sink.write.mid", *FILE_POINTS)


def orders_scenario(name: str, source: FileDirectory | Replayable, marker: bool = True) -> Scenario:
    """The orders pipeline fed by ``source``; ``marker=False`` takes the one-bug sink."""
    kind = "JSON file source" if isinstance(source, FileDirectory) else "replayable source"
    return Scenario(
        name=name,
        summary=f"order events ({kind}) -> paid orders per country -> running totals in SQLite "
        + ("(expected: exactly-once)" if marker else "without a batch-id marker (expected: a replay counted twice)"),
        guarantee="exactly-once" if marker else "at-least-once",
        kill_points=FILE_POINTS if isinstance(source, FileDirectory) else REPLAYABLE_POINTS,
        transform=paid_orders,
        attach_sink=_attach(revenue_totals if marker else revenue_totals_no_marker),
        read_output=_read_output,
        identity=("country",),
        oracle=_oracle,
        sink_steps=True,
        rows_per_round=(15, 30),
        source=source,
    )


SCENARIO = orders_scenario("orders_json_revenue", FileDirectory("json", ROWS))
BROKEN_SCENARIO = orders_scenario("orders_json_revenue_no_marker", FileDirectory("json", ROWS), marker=False)
REPLAYABLE_SCENARIO = orders_scenario("orders_replayable_revenue", Replayable(ROWS))
BROKEN_REPLAYABLE_SCENARIO = orders_scenario("orders_replayable_revenue_no_marker", Replayable(ROWS), marker=False)
