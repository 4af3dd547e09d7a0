"""BROKEN on purpose: a streaming sink that publishes rows inside ``write()``.

Bug: each write task writes its rows straight into ``<path>/data/`` where
readers see them, and ``commit()`` does nothing. If the driver dies after the
write tasks of batch N finished but before Spark wrote ``commits/N``, Spark
re-runs batch N on restart and its rows appear twice; an aborted batch stays
visible too. At best at-least-once.

Check that must catch it: ``write-invisible-until-commit`` (rows are visible
before ``commit()``); ``idempotent-commit``, ``abort-cleans-up`` and the
crash points ``sink.commit.before|after`` show the resulting duplicates.

    python -m harness check-sink examples/connectors/publish_in_write_sink.py:PublishInWriteSink \\
        --read-back examples/connectors/publish_in_write_sink.py:read_back
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark import TaskContext
from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage

from examples.connectors._jsonl import read_jsonl_dir, write_jsonl


@dataclass(frozen=True)
class Published(WriterCommitMessage):
    file: str
    rows: int


class PublishInWriteWriter(DataSourceStreamWriter):
    def __init__(self, path: str) -> None:
        self.path = path

    def write(self, iterator: Iterator[Any]) -> Published:
        ctx = TaskContext.get()
        assert ctx is not None
        batch = ctx.getLocalProperty("streaming.sql.batchId")
        rows = [row.asDict() for row in iterator]
        name = f"part-{batch}-{ctx.partitionId()}-{uuid.uuid4().hex}.jsonl"
        write_jsonl(Path(self.path) / "data" / name, rows)  # BUG: visible to readers before commit()
        return Published(name, len(rows))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing left to do: the rows are already visible (the bug)."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Cannot take back rows readers may have seen."""


class PublishInWriteSink(DataSource):
    """Format ``jsonl_publish_in_write``; option ``path``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_publish_in_write"

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        return PublishInWriteWriter(str(self.options["path"]))


def read_back(path: str) -> list[dict[str, Any]]:
    """What readers of ``path`` see: every row under ``data/``."""
    return read_jsonl_dir(Path(path) / "data")
