"""File helpers shared by the file-based reference sinks: durable writes,
Spark rows to Arrow, and the identity of the running Spark task.

Contracts: :func:`write_parquet_durably` returns only once the file's bytes
and its directory entry are on disk (``fsync`` of the file and of the
directory), so a file a commit message names survives a crash of the machine
as well as of the process; :func:`atomic_write_text` makes a file appear
under its final name all at once (``os.replace``) or not at all.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make the entries of directory ``path`` (creations, renames, deletions) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same directory,
    ``fsync`` and ``os.replace``: readers see the old state or the whole new file."""
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex}")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _as_dict(row: Any) -> dict[str, Any]:
    if isinstance(row, Mapping):
        return dict(row)
    return row.asDict(recursive=True)  # type: ignore[no-any-return]


def rows_to_table(rows: Iterable[Any], schema: StructType) -> pa.Table:
    """Spark ``Row``s (or mappings) to an Arrow table of ``schema``.

    PySpark hands ``TimestampType`` values to Python as naive datetimes in the
    process's local time zone; they are made timezone-aware here so the
    stored instant does not depend on the reader's time zone."""
    import pyarrow as pa
    from pyspark.sql.types import TimestampType

    from scenarios.arrowschema import utc_arrow_schema

    ts_fields = [f.name for f in schema.fields if isinstance(f.dataType, TimestampType)]
    records = []
    for row in rows:
        record = _as_dict(row)
        for name in ts_fields:
            value = record.get(name)
            if isinstance(value, datetime) and value.tzinfo is None:
                record[name] = value.astimezone(UTC)
        records.append(record)
    return pa.Table.from_pylist(records, schema=utc_arrow_schema(schema))



def write_parquet_durably(table: pa.Table, path: Path) -> None:
    """Write ``table`` to ``path`` (a new file) and ``fsync`` it and its directory."""
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        pq.write_table(table, f)
        f.flush()
        os.fsync(f.fileno())
    fsync_dir(path.parent)


def read_parquet_rows(path: Path) -> list[dict[str, Any]]:
    """All rows of one parquet file as dicts (timestamps timezone-aware)."""
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pylist()  # type: ignore[no-any-return]


def task_identity() -> tuple[int, int, int]:
    """``(batch_id, partition_id, attempt)`` of the running streaming write task.

    The batch id is the task's local property ``streaming.sql.batchId``, which
    Spark sets for every task of a micro-batch. Raises ``RuntimeError`` outside
    a streaming task (e.g. a batch ``df.write``), where there is no batch id."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    raw = ctx.getLocalProperty("streaming.sql.batchId") if ctx is not None else None
    if raw in (None, ""):
        raise RuntimeError(
            "this sink is a streaming sink: write() found no 'streaming.sql.batchId' task property; "
            "use it with df.writeStream, not df.write"
        )
    assert ctx is not None
    return int(raw), ctx.partitionId(), ctx.attemptNumber()
