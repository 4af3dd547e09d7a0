"""BROKEN on purpose: a streaming sink whose ``commit()`` publishes its staged files one by one.

Bug: ``write()`` stages each task's rows in a hidden file (correct), and
``commit(messages, batchId)`` skips a batch whose marker exists (correct), but
publishes by renaming the staged files into ``data/`` **one at a time** and
writes the marker last. Readers list ``data/``, so each rename is visible on
its own: a kill after the first rename shows readers part of the batch, and
Spark's replay of the batch stages new files and renames them all again, so
the files published before the kill are there twice: duplicates.

Every named crash point passes: ``sink.commit.before`` (nothing published) and
``sink.commit.after`` (marker written, the replay is skipped) are outside the
window, and ``sink.write.*`` only stage.

Check that must catch it: ``crash-anywhere`` of ``check-sink``: duplicates
after the step ``rename_one_by_one_sink.py:LINE commit -> os.replace`` of the
first file. The reference sink that publishes atomically is
``scenarios.sinks.transactional:TransactionalFileSink`` (one marker naming the
files is the commit point; readers read through markers).

    python -m harness check-sink examples/connectors/rename_one_by_one_sink.py:RenameOneByOneSink \\
        --read-back examples/connectors/rename_one_by_one_sink.py:read_back

A chaos campaign over ``SCENARIO`` (below) draws ``sink.step`` faults in
``commit()`` as well::

    python -m harness chaos examples.connectors.rename_one_by_one_sink:SCENARIO --examples 20
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark import TaskContext
from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage

from examples.connectors._jsonl import read_jsonl_dir, write_jsonl


@dataclass(frozen=True)
class Staged(WriterCommitMessage):
    file: str | None
    rows: int


class RenameOneByOneWriter(DataSourceStreamWriter):
    def __init__(self, path: str) -> None:
        self.root = Path(path)

    def _staging(self, batch_id: int | str) -> Path:
        return self.root / "_staging" / str(batch_id)

    def write(self, iterator: Iterator[Any]) -> Staged:
        ctx = TaskContext.get()
        assert ctx is not None
        batch = ctx.getLocalProperty("streaming.sql.batchId")
        rows = [row.asDict() for row in iterator]
        if not rows:
            return Staged(None, 0)
        name = f"part-{batch}-{ctx.partitionId()}-{ctx.attemptNumber()}-{uuid.uuid4().hex}.jsonl"
        write_jsonl(self._staging(batch) / name, rows)  # hidden until commit(): correct
        return Staged(name, len(rows))

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        marker = self.root / "_committed" / f"{batchId}"
        if marker.exists():  # a replayed batch that was published: drop the new attempt's files
            shutil.rmtree(self._staging(batchId), ignore_errors=True)
            return
        (self.root / "data").mkdir(parents=True, exist_ok=True)
        for name in sorted(m.file for m in messages if isinstance(m, Staged) and m.file):
            os.replace(self._staging(batchId) / name, self.root / "data" / name)  # BUG: visible one by one
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("published\n")
        shutil.rmtree(self._staging(batchId), ignore_errors=True)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        shutil.rmtree(self._staging(batchId), ignore_errors=True)


class RenameOneByOneSink(DataSource):
    """Format ``jsonl_rename_one_by_one``; option ``path``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_rename_one_by_one"

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        return RenameOneByOneWriter(str(self.options["path"]))


def read_back(path: str) -> list[dict[str, Any]]:
    """What readers of ``path`` see: every row under ``data/``."""
    return read_jsonl_dir(Path(path) / "data")


def _scenario() -> Any:
    from harness.conformance import scenario_for

    return scenario_for(RenameOneByOneSink, read_back, name="rename_one_by_one_sink")


#: This sink fed by the replayable source, for ``run``/``chaos``/``census`` by import path.
SCENARIO = _scenario()
