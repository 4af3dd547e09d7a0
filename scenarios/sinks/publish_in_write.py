"""``publish_in_write_files``: a deliberately broken Python streaming sink (at-least-once).

Do **not** copy this one: it is the mistake the harness must catch. ``write()``
makes its rows visible at once (a parquet file renamed into ``data/``), and
``commit()`` does nothing. When the driver dies after some or all write tasks
of batch N finished but before Spark wrote ``commits/N``, Spark re-runs batch
N on restart and its rows are published a second time: duplicates. A crash
before any task published (or after ``commits/N``) leaves the output exact,
which is why only some crash points expose it. Compare
:mod:`scenarios.sinks.transactional`, which stages in ``write()`` and publishes
in ``commit()``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from scenarios.sinks._files import fsync_dir, read_parquet_rows, rows_to_table, task_identity, write_parquet_durably

FORMAT = "publish_in_write_files"
DATA = "data"


@dataclass(frozen=True)
class Published(WriterCommitMessage):
    """The file one write task already made visible (``None`` if it had no rows)."""

    batch_id: int
    file: str | None
    rows: int


def publish_rows(root: Path, schema: StructType, rows: Iterator[Any], batch_id: int, partition: int) -> Published:
    """Write ``rows`` and make them visible immediately (the body of ``write()``)."""
    table = rows_to_table(rows, schema)
    if table.num_rows == 0:
        return Published(batch_id, None, 0)
    data = root / DATA
    tmp = data / f".tmp-{uuid.uuid4().hex}.parquet"
    write_parquet_durably(table, tmp)
    name = f"part-{batch_id}-{partition:05d}-{uuid.uuid4().hex}.parquet"
    os.replace(tmp, data / name)
    fsync_dir(data)
    return Published(batch_id, name, table.num_rows)


def read_published(path: str | Path) -> list[dict[str, Any]]:
    """Every row a reader of ``path`` sees (all files in ``data/``, hidden temp files excluded)."""
    data = Path(path) / DATA
    if not data.is_dir():
        return []
    return [row for f in sorted(data.glob("part-*.parquet")) for row in read_parquet_rows(f)]


class PublishInWriteStreamWriter(DataSourceStreamWriter):
    """Publishes in ``write()``; ``commit``/``abort`` cannot undo or dedupe anything."""

    def __init__(self, path: str, schema: StructType) -> None:
        self.path = path
        self.schema = schema

    def write(self, iterator: Iterator[Any]) -> Published:
        batch_id, partition, _ = task_identity()
        return publish_rows(Path(self.path), self.schema, iterator, batch_id, partition)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing left to do: the rows are already visible (that is the bug)."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Cannot take back rows readers may already have seen."""


class PublishInWriteSink(DataSource):
    """Format ``publish_in_write_files``; option ``path`` (required)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        path = self.options.get("path")
        if not path:
            raise ValueError(f"{FORMAT} sink: set option 'path' to the directory the sink owns")
        return PublishInWriteStreamWriter(str(path), schema)
