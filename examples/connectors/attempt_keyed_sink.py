"""BROKEN on purpose: a sink whose idempotency is keyed on the task attempt id.

Bug: ``write()`` stages rows under ``_staging/<taskAttemptId>.jsonl`` and
``commit()`` publishes each staged file as ``data/<taskAttemptId>.jsonl``,
skipping a file that already exists "because it was committed before". That
looks idempotent, but the key is wrong: a batch replayed after a restart runs
as new task attempts (new ids, so its rows are published twice), and task
attempt ids restart at 0 in every new SparkContext, so after a driver restart
a *new* batch's files collide with an old batch's names and are silently
dropped.

Check that must catch it: ``keys-on-batch-id``.

    python -m harness check-sink examples/connectors/attempt_keyed_sink.py:AttemptKeyedSink \\
        --read-back examples/connectors/attempt_keyed_sink.py:read_back
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark import TaskContext
from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage

from examples.connectors._jsonl import read_jsonl_dir, write_jsonl


@dataclass(frozen=True)
class Staged(WriterCommitMessage):
    task_attempt_id: int
    rows: int


class AttemptKeyedWriter(DataSourceStreamWriter):
    def __init__(self, path: str) -> None:
        self.path = Path(path)

    def write(self, iterator: Iterator[Any]) -> Staged:
        ctx = TaskContext.get()
        assert ctx is not None
        rows = [row.asDict() for row in iterator]
        tid = ctx.taskAttemptId()  # BUG: the idempotency key should be the batch id
        write_jsonl(self.path / "_staging" / f"{tid}.jsonl", rows)
        return Staged(tid, len(rows))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        (self.path / "data").mkdir(parents=True, exist_ok=True)
        for m in messages:
            if not isinstance(m, Staged):
                continue
            staged, target = (
                self.path / "_staging" / f"{m.task_attempt_id}.jsonl",
                self.path / "data" / f"{m.task_attempt_id}.jsonl",
            )
            if target.exists():
                staged.unlink(missing_ok=True)  # "already committed": skip
                continue
            os.replace(staged, target)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        for m in messages:
            if isinstance(m, Staged):
                (self.path / "_staging" / f"{m.task_attempt_id}.jsonl").unlink(missing_ok=True)


class AttemptKeyedSink(DataSource):
    """Format ``jsonl_attempt_keyed``; option ``path``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_attempt_keyed"

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        return AttemptKeyedWriter(str(self.options["path"]))


def read_back(path: str) -> list[dict[str, Any]]:
    """What readers of ``path`` see: the published files under ``data/``."""
    return read_jsonl_dir(Path(path) / "data")
