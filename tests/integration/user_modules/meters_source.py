"""A user's own Python streaming source, fed through its context, written from docs/sources.md.

The connector (:class:`MeterLogSource`, format ``meter_log``) reads an append-only log of meter
readings kept as one CSV file per shard: line ``n`` of shard ``s`` is ``meter,watts``, and an offset
is the number of lines read per shard. Its context (:func:`meter_log`) makes the log in a work
directory and appends readings to it. The pipeline keeps the non-zero readings; the sink is a
``foreachBatch`` function that adds each batch's totals per meter into SQLite and records the batch
id in the same transaction, so a batch Spark runs again is skipped.
Its twin adds without the batch id: a batch run again is counted twice.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from harness.sources import PythonSource
from scenarios import Scenario, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

SCHEMA = "shard INT, line BIGINT, meter STRING, watts BIGINT"
TOTALS = "meter TEXT PRIMARY KEY, readings INTEGER, watts INTEGER"


# -- the connector --------------------------------------------------------------------------------


def shard_file(root: str | Path, shard: int) -> Path:
    """The log file of one shard."""
    return Path(root) / f"shard-{shard}.csv"


def lines_in(root: str | Path, shard: int) -> int:
    """Complete lines in a shard's log (0 before it exists)."""
    try:
        return shard_file(root, shard).read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


class ShardRange(InputPartition):
    """Lines ``[start, end)`` of one shard."""

    def __init__(self, shard: int, start: int, end: int) -> None:
        super().__init__((shard, start, end))
        self.shard, self.start, self.end = shard, start, end


class MeterLogReader(DataSourceStreamReader):
    """Offsets ``{"0": lines of shard 0, "1": ...}``; every available line in one batch."""

    def __init__(self, options: dict[str, str]) -> None:
        self.path = options["path"]
        self.shards = int(options.get("shards", "2"))

    def initialOffset(self) -> dict[str, int]:
        return {str(s): 0 for s in range(self.shards)}

    def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
        return {str(s): max(int(start[str(s)]), lines_in(self.path, s)) for s in range(self.shards)}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        ranges = [(int(s), int(start[s]), int(e)) for s, e in end.items()]
        return [ShardRange(s, a, b) for s, a, b in ranges if b > a]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, ShardRange)
        with open(shard_file(self.path, partition.shard), encoding="utf-8") as f:
            for n, text in enumerate(f):
                if n >= partition.end:
                    break
                if n >= partition.start:
                    meter, watts = text.strip().split(",")
                    yield partition.shard, n, meter, int(watts)


class MeterLogSource(DataSource):
    """Format ``meter_log``: options ``path`` (the log directory) and ``shards``."""

    @classmethod
    def name(cls) -> str:
        return "meter_log"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return MeterLogReader(dict(self.options))


class MeterLog:
    """The connector's context: a log in the work directory; ``add_data`` appends to it."""

    def __init__(self, workdir: Path, shards: int = 2) -> None:
        self.root = Path(workdir) / "meters"
        self.root.mkdir(parents=True, exist_ok=True)
        self.shards = shards

    def options(self) -> dict[str, str]:
        return {"path": str(self.root), "shards": str(self.shards)}

    def add_data(self, rows: int) -> None:
        """Append about ``rows`` readings, spread over the shards, and fsync them."""
        for shard in range(self.shards):
            start = lines_in(self.root, shard)
            with open(shard_file(self.root, shard), "a", encoding="utf-8") as f:
                for n in range(start, start + max(1, math.ceil(rows / self.shards))):
                    f.write(f"m{(shard * 31 + n * 7) % 6},{(shard * 1_009 + n * 7_919) % 5_000}\n")
                f.flush()
                os.fsync(f.fileno())

    def close(self) -> None:
        """Files only: nothing to release."""


def meter_log(workdir: Path) -> MeterLog:
    """The context factory."""
    return MeterLog(workdir)


# -- the pipeline ---------------------------------------------------------------------------------


def transform(df: DataFrame) -> DataFrame:
    """Non-zero readings per meter."""
    return df.where(F.col("watts") > 0).select("meter", "watts")


def totals(df: DataFrame) -> DataFrame:
    """Readings and watts per meter."""
    readings = F.count(F.lit(1)).alias("readings")
    return df.groupBy("meter").agg(readings, F.sum("watts").alias("watts"))


def oracle(batch_df: DataFrame, ctx: Any) -> DataFrame:
    """The totals over every reading the run read."""
    return totals(transform(batch_df))


def _connect(output: str) -> sqlite3.Connection:
    Path(output).mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(f"{output}/meters.db", isolation_level=None, timeout=60.0)
    conn.execute(f"CREATE TABLE IF NOT EXISTS totals ({TOTALS})")
    conn.execute("CREATE TABLE IF NOT EXISTS batches (batch_id INTEGER PRIMARY KEY)")
    return conn


def _add(conn: sqlite3.Connection, rows: list[Any]) -> None:
    conn.executemany(
        "INSERT INTO totals VALUES (?, ?, ?) ON CONFLICT(meter) DO UPDATE SET "
        "readings = readings + excluded.readings, watts = watts + excluded.watts",
        [(r["meter"], r["readings"], r["watts"]) for r in rows],
    )


def add_once(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Add each batch's totals and its batch id in one transaction; skip a batch seen before."""
    output = ctx.output

    def write(batch: DataFrame, batch_id: int) -> None:
        rows = totals(batch).collect()
        conn = _connect(output)
        try:
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                seen = conn.execute("SELECT 1 FROM batches WHERE batch_id = ?", (batch_id,))
                if seen.fetchone() is None:
                    _add(conn, rows)
                    conn.execute("INSERT INTO batches VALUES (?)", (batch_id,))
        finally:
            conn.close()

    return writer.foreachBatch(write)


def add_always(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Add each batch's totals in one transaction, without looking at its batch id."""
    output = ctx.output

    def write(batch: DataFrame, batch_id: int) -> None:
        rows = totals(batch).collect()
        conn = _connect(output)
        try:
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                _add(conn, rows)
        finally:
            conn.close()

    return writer.foreachBatch(write)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """The totals table, in the oracle's schema."""
    db = Path(ctx.output) / "meters.db"
    if not db.exists():
        return spark.createDataFrame([], schema)
    conn = sqlite3.connect(str(db))
    try:
        rows = conn.execute("SELECT meter, readings, watts FROM totals").fetchall()
    finally:
        conn.close()
    return spark.createDataFrame(rows, schema)


CORRECT = Scenario(
    name="meters_source",
    summary="a user's meter-log DataSource -> totals per meter into SQLite with a batch ledger",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "sink.commit.after", "after_commit_logged"),
    transform=transform,
    attach_sink=add_once,
    read_output=read_output,
    oracle=oracle,
    identity=("meter",),
    source=PythonSource("meters_source:MeterLogSource", context="meters_source:meter_log"),
)
BROKEN = dataclasses.replace(
    CORRECT,
    name="meters_source_no_ledger",
    summary="a user's meter-log DataSource -> totals per meter added into SQLite, no batch ledger",
    attach_sink=add_always,
)
