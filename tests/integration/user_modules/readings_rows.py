"""Sensor readings in the user's own schema on the replayable source, from docs/sources.md.

``reading`` makes a sensor reading from a row's position alone (pure: no clock, no global random
state, no ``hash()`` of strings). The pipeline keeps the valid readings and converts them to
Fahrenheit. The sink is a ``foreachBatch`` function that upserts into SQLite keyed by the row's
provenance, so a batch Spark runs again replaces its own rows.
Its twin inserts into a table without a key: a batch run again inserts its rows twice.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from scenarios import Replayable, Rows, Scenario, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

SCHEMA = "sensor STRING, celsius DOUBLE, valid BOOLEAN"
SENSORS = ("boiler", "attic", "garage", "cellar", "porch")
COLUMNS = "partition, offset, seq, sensor, fahrenheit"
MASK = (1 << 64) - 1


def _mix(x: int) -> int:
    """splitmix64's finaliser: a pure 64-bit hash."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def reading(seed: int, partition: int, offset: int, seq: int) -> dict[str, Any]:
    """One reading, a pure function of its position."""
    h = _mix(_mix(_mix(_mix(seed) ^ partition) ^ offset) ^ seq)
    return {
        "sensor": SENSORS[h % len(SENSORS)],
        "celsius": ((h >> 8) % 800) / 10 - 20,
        "valid": (h >> 20) % 7 != 0,
    }


def transform(df: DataFrame) -> DataFrame:
    """Valid readings in Fahrenheit, with their provenance."""
    return df.where(F.col("valid")).select(
        "partition",
        "offset",
        "seq",
        "sensor",
        F.round(F.col("celsius") * 9 / 5 + 32, 1).alias("fahrenheit"),
    )


def _connect(output: str, keyed: bool) -> sqlite3.Connection:
    Path(output).mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(f"{output}/readings.db", isolation_level=None, timeout=60.0)
    key = ", PRIMARY KEY (partition, offset, seq)" if keyed else ""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS readings (partition INTEGER, offset INTEGER, seq INTEGER, "
        f"sensor TEXT, fahrenheit REAL{key})"
    )
    return conn


def _rows(batch: DataFrame) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in batch.select(*COLUMNS.split(", ")).collect()]


def upsert(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Upsert each batch by the rows' provenance, in one transaction."""
    output = ctx.output

    def write(batch: DataFrame, batch_id: int) -> None:
        rows = _rows(batch)
        conn = _connect(output, keyed=True)
        try:
            with conn:
                conn.execute("BEGIN")
                sql = f"INSERT OR REPLACE INTO readings ({COLUMNS}) VALUES (?, ?, ?, ?, ?)"
                conn.executemany(sql, rows)
        finally:
            conn.close()

    return writer.foreachBatch(write)


def insert(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Insert each batch into a table without a key, in one transaction."""
    output = ctx.output

    def write(batch: DataFrame, batch_id: int) -> None:
        rows = _rows(batch)
        conn = _connect(output, keyed=False)
        try:
            with conn:
                conn.execute("BEGIN")
                conn.executemany(f"INSERT INTO readings ({COLUMNS}) VALUES (?, ?, ?, ?, ?)", rows)
        finally:
            conn.close()

    return writer.foreachBatch(write)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """The readings table, in the oracle's schema."""
    db = Path(ctx.output) / "readings.db"
    if not db.exists():
        return spark.createDataFrame([], schema)
    conn = sqlite3.connect(str(db))
    try:
        rows = conn.execute(f"SELECT {COLUMNS} FROM readings").fetchall()
    finally:
        conn.close()
    return spark.createDataFrame(rows, schema)


CORRECT = Scenario(
    name="readings_rows",
    summary="valid sensor readings in Fahrenheit -> foreachBatch SQLite upsert by provenance",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "sink.commit.before", "sink.commit.after"),
    transform=transform,
    attach_sink=upsert,
    read_output=read_output,
    source=Replayable(Rows(SCHEMA, reading)),
)
BROKEN = dataclasses.replace(
    CORRECT,
    name="readings_rows_insert",
    summary="valid sensor readings in Fahrenheit -> foreachBatch SQLite insert, no key",
    attach_sink=insert,
)
