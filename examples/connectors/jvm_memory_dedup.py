"""BROKEN on purpose: a ``foreachBatch`` function that remembers the batches it wrote in Spark's memory.

Bug: the function keeps the ids of the batches it wrote in a *global temporary view* (it outlives the
``batch_df``'s session, and the author took it for the query's own bookkeeping). It skips a batch whose id is in
the view; otherwise it records the id there first, then inserts the batch's rows into SQLite. The view lives in
the driver's JVM: a crash loses it. A crash after the insert, before Spark commits the batch, re-runs the batch
with no record of it, and its rows go in a second time: duplicates.

It is also the subject that tells a kill of the driver's Python process alone (``kill_python``, what
``check-sink`` uses on a ``foreachBatch`` function, the JVM hosted apart) from the whole driver's death: were the
view to survive the first, a crash after recording the id would *lose* the batch, and a crash after the insert
would pass. A check must see duplicates and nothing lost, as it does with ``--faults hard``::

    python -m harness check-sink examples/connectors/jvm_memory_dedup.py:jvm_memory_sink \\
        --read-back examples/connectors/jvm_memory_dedup.py:read_back
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

COLUMNS = ("partition", "offset", "seq", "key", "value")
_COLS = ", ".join(f'"{c}"' for c in COLUMNS)


def jvm_memory_sink(path: str) -> Callable[[DataFrame, int], None]:
    """``factory(path) -> fn(batch_df, batch_id)``: rows into ``PATH/sink.sqlite3``, batch ids into a global view."""
    Path(path).mkdir(parents=True, exist_ok=True)
    db = Path(path) / "sink.sqlite3"
    view = "written_" + hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:12]

    def write_batch(batch_df: DataFrame, batch_id: int) -> None:
        spark = batch_df.sparkSession
        qualified = f"{spark.conf.get('spark.sql.globalTempDatabase', 'global_temp')}.{view}"
        written: set[int] = set()
        if spark.catalog.tableExists(qualified):
            written = {row.batch_id for row in spark.table(qualified).collect()}
        if batch_id in written:
            return  # "already written" (as long as the JVM lives)
        marks = spark.createDataFrame([(b,) for b in sorted(written | {batch_id})], "batch_id long")
        marks.createOrReplaceGlobalTempView(view)
        rows = [tuple(r) for r in batch_df.select(*COLUMNS).collect()]
        conn = sqlite3.connect(db, isolation_level=None, timeout=60.0)
        try:
            conn.execute(f"CREATE TABLE IF NOT EXISTS rows ({_COLS})")
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(f"INSERT INTO rows ({_COLS}) VALUES (?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        finally:
            conn.close()

    return write_batch


def read_back(path: str) -> list[dict[str, Any]]:
    """Every row readers of the sink's database see."""
    db = Path(path) / "sink.sqlite3"
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'rows'").fetchone():
            return []
        return [dict(zip(COLUMNS, r, strict=True)) for r in conn.execute(f"SELECT {_COLS} FROM rows")]
    finally:
        conn.close()
