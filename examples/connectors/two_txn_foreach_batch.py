"""BROKEN on purpose: a ``foreachBatch`` function that writes a batch's rows and its batch id in two transactions.

Bug: the function skips a batch whose id is recorded, inserts the batch's rows
and commits, waits a round trip (to a bookkeeping service, say), and only then
records the batch id in a **second** transaction. If the driver dies between
the two commits, Spark re-runs the batch (``commits/N`` was never written), the
id is not recorded, and the rows go in a second time: duplicates.

Every named crash point passes: the kill lands before the function (nothing
written), or after it returned (both transactions done, the replay is
skipped). The window is *inside* the user's code.

Check that must catch it: ``crash-anywhere`` of ``check-sink`` (a kill after
each step of a census batch): duplicates after the step that commits the rows,
``two_txn_foreach_batch.py:LINE write_batch -> sqlite3.Connection.execute``.

    python -m harness check-sink examples/connectors/two_txn_foreach_batch.py:two_txn_sink \\
        --read-back examples/connectors/two_txn_foreach_batch.py:read_back

A chaos campaign finds it too: ``SCENARIO`` (below) is the replayable source
feeding this sink, and chaos draws ``sink.step`` faults inside ``write_batch``
from a census of each example's data, then shrinks to the one step that matters::

    python -m harness chaos examples.connectors.two_txn_foreach_batch:SCENARIO --examples 20 --seed 3

:func:`keyed_two_txn_sink` (``KEYED_SCENARIO``) is the same function one bug away: its rows table
is keyed by the source's provenance ``(partition, offset, seq)`` and inserts
with ``INSERT OR IGNORE``, so the replayed rows change nothing. It passes.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

COLUMNS = ("partition", "offset", "seq", "key", "value")
_COLS = ", ".join(f'"{c}"' for c in COLUMNS)


def _database(path: str) -> Path:
    Path(path).mkdir(parents=True, exist_ok=True)
    return Path(path) / "sink.sqlite3"


def _sink(path: str, round_trip_s: float, keyed: bool) -> Callable[[DataFrame, int], None]:
    db = _database(path)
    key = ', PRIMARY KEY ("partition", "offset", "seq")' if keyed else ""
    insert = "INSERT OR IGNORE" if keyed else "INSERT"

    def write_batch(batch_df: DataFrame, batch_id: int) -> None:
        conn = sqlite3.connect(db, isolation_level=None, timeout=60.0)
        try:
            conn.execute(f"CREATE TABLE IF NOT EXISTS rows ({_COLS}{key})")
            conn.execute("CREATE TABLE IF NOT EXISTS batches (batch_id INTEGER PRIMARY KEY)")
            if conn.execute("SELECT 1 FROM batches WHERE batch_id = ?", (batch_id,)).fetchone():
                return  # a replayed batch whose id is recorded: nothing to do
            rows = [tuple(r) for r in batch_df.select(*COLUMNS).collect()]
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(f"{insert} INTO rows ({_COLS}) VALUES (?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")  # the rows are visible from here on ...
            time.sleep(round_trip_s)  # ... a round trip to the bookkeeping service ...
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO batches (batch_id) VALUES (?)", (batch_id,))
            conn.execute("COMMIT")  # ... and only now is the batch id recorded (the bug)
        finally:
            conn.close()

    return write_batch


def two_txn_sink(path: str, round_trip_s: str | float = 0.05) -> Callable[[DataFrame, int], None]:
    """The broken factory: ``factory(path, **options) -> fn(batch_df, batch_id)``."""
    return _sink(path, float(round_trip_s), keyed=False)


def keyed_two_txn_sink(path: str, round_trip_s: str | float = 0.05) -> Callable[[DataFrame, int], None]:
    """The correct twin: the same two transactions, rows keyed by provenance and inserted idempotently."""
    return _sink(path, float(round_trip_s), keyed=True)


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


def _scenarios() -> tuple[Any, Any]:
    from harness.conformance import scenario_for

    return (
        scenario_for(two_txn_sink, read_back, name="two_txn_foreach_batch"),
        scenario_for(keyed_two_txn_sink, read_back, name="keyed_two_txn_foreach_batch"),
    )


#: This sink fed by the replayable source, for ``run``/``chaos``/``census`` by import path.
SCENARIO, KEYED_SCENARIO = _scenarios()
