"""BROKEN on purpose: the two-transaction ``foreachBatch`` function, reading each ``Row``'s fields by name.

Bug: as in :mod:`two_txn_foreach_batch`: the function inserts a batch's rows and
commits, then records the batch id in a **second** transaction. A driver that dies
between the two commits leaves the rows without the id; Spark re-runs the batch and
the rows go in again: duplicates.

What this variant adds is the shape of typical sink code: the rows are built field
by field (``r["key"]``), so a batch of 200 rows takes over a thousand steps, nearly
all ``pyspark.sql.types.Row.__getitem__``, and the window between the two commits is
3 of them. A kill after any ``Row`` read is the same experiment as a kill before
the first insert; only the effect boundaries (:mod:`fault_injectors.effects`)
differ, and there are 12 of them.

Check that must catch it: ``crash-anywhere`` of ``check-sink``, every seed, with a
budget of 10 kills for 200-row batches: 9 boundaries lie outside the window, so any
10 of the 12 hold one of its 3 (duplicates after the step that commits the rows,
``two_txn_row_fields.py:LINE write_batch -> sqlite3.Connection.execute``)::

    python -m harness check-sink examples/connectors/two_txn_row_fields.py:two_txn_row_fields_sink \\
        --read-back examples/connectors/two_txn_row_fields.py:read_back --batch-rows 200 --steps 10
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from examples.connectors.two_txn_foreach_batch import COLUMNS, _database, read_back

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["read_back", "two_txn_row_fields_sink"]
_COLS = ", ".join(f'"{c}"' for c in COLUMNS)


def two_txn_row_fields_sink(path: str, round_trip_s: str | float = 0.05) -> Callable[[DataFrame, int], None]:
    """The broken factory: ``factory(path, **options) -> fn(batch_df, batch_id)``."""
    db, pause = _database(path), float(round_trip_s)

    def write_batch(batch_df: DataFrame, batch_id: int) -> None:
        conn = sqlite3.connect(db, isolation_level=None, timeout=60.0)
        try:
            conn.execute(f"CREATE TABLE IF NOT EXISTS rows ({_COLS})")
            conn.execute("CREATE TABLE IF NOT EXISTS batches (batch_id INTEGER PRIMARY KEY)")
            if conn.execute("SELECT 1 FROM batches WHERE batch_id = ?", (batch_id,)).fetchone():
                return  # a replayed batch whose id is recorded: nothing to do
            batch = batch_df.collect()
            rows = [(r["partition"], r["offset"], r["seq"], r["key"], r["value"]) for r in batch]
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(f"INSERT INTO rows ({_COLS}) VALUES (?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")  # the rows are visible from here on ...
            time.sleep(pause)  # ... a round trip to the bookkeeping service ...
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO batches (batch_id) VALUES (?)", (batch_id,))
            conn.execute("COMMIT")  # ... and only now is the batch id recorded (the bug)
        finally:
            conn.close()

    return write_batch
