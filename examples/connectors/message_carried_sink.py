"""Correct, and unusual: a streaming sink whose data travels in the commit messages.

``write()`` on the executors stores nothing: it returns the task's rows inside
its commit message (fine for small batches, e.g. alerts or control records).
``commit(messages, batchId)`` runs once on the driver side with every
successful task's message and writes the whole batch as one file,
``data/batch-<batchId>.jsonl``, atomically (temp file, fsync, ``os.replace``).
The file name is the idempotency key: a batch Spark replays after a crash
replaces its own file with the same rows, so readers see each batch once.
Nothing is staged, so ``abort()`` has nothing to clean up and a task attempt
that dies mid-write leaves nothing behind.

It passes every sink check (the protocol checks without Spark; ``crash-points``
and ``crash-anywhere`` with Spark)::

    python -m harness check-sink examples/connectors/message_carried_sink.py:MessageCarriedSink \\
        --read-back examples/connectors/message_carried_sink.py:read_back

Its broken twin, which appends every committed batch to one log, is
:mod:`examples.connectors.message_append_sink`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage

from examples.connectors._jsonl import read_jsonl_dir, write_jsonl


@dataclass(frozen=True)
class CarriedRows(WriterCommitMessage):
    """One task's rows, carried to ``commit()`` (dicts of the row's columns)."""

    rows: tuple[dict[str, Any], ...]


def carried_rows(messages: Sequence[WriterCommitMessage | None]) -> list[dict[str, Any]]:
    """Every row of the successful tasks' messages, in message order."""
    return [r for m in messages if isinstance(m, CarriedRows) for r in m.rows]


class MessageCarriedWriter(DataSourceStreamWriter):
    def __init__(self, path: str) -> None:
        self.root = Path(path)

    def write(self, iterator: Iterator[Any]) -> CarriedRows:
        return CarriedRows(tuple(row.asDict() for row in iterator))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        write_jsonl(self.root / "data" / f"batch-{batchId}.jsonl", carried_rows(messages))  # keyed by batch id

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing was written: the rows only ever lived in the messages."""


class MessageCarriedSink(DataSource):
    """Format ``jsonl_message_carried``; option ``path``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_message_carried"

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        return MessageCarriedWriter(str(self.options["path"]))


def read_back(path: str) -> list[dict[str, Any]]:
    """What readers of ``path`` see: every row of every batch file under ``data/`` (temp files excluded)."""
    return read_jsonl_dir(Path(path) / "data")
