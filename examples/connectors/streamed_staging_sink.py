"""Correct, and unusual: a sink that streams each task's rows into a staging file as they arrive.

``write()`` does not hold a task's rows in memory: it appends each row to a
hidden staging file ``_staging/<batch>/part-<partition>-<attempt>-<uuid>.jsonl``
as the iterator yields it, fsyncs, and returns a message naming the file. A
task attempt that dies mid-write therefore leaves a *partial* staging file
behind; Spark retries the task and commits only the successful attempts'
messages. ``commit(messages, batchId)`` publishes exactly the files the
messages name: it moves them into ``data/<batch>/`` and then writes the
manifest ``_committed/<batch>.json`` listing them (atomically): **the manifest
is the commit point**, readers read through manifests (:func:`read_back`), and
a batch whose manifest exists is skipped on replay. ``abort()`` removes the
batch's staging directory.

It passes every sink check::

    python -m harness check-sink examples/connectors/streamed_staging_sink.py:StreamedStagingSink \\
        --read-back examples/connectors/streamed_staging_sink.py:read_back

Its broken twin, which publishes every file in the staging directory instead
of the files the messages name, is :mod:`examples.connectors.staging_glob_sink`.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark import TaskContext
from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage


@dataclass(frozen=True)
class StreamedFile(WriterCommitMessage):
    """A successful task attempt's staging file (a name in ``_staging/<batch>/``) and its row count."""

    batch_id: int
    file: str
    rows: int


class StreamedStagingWriter(DataSourceStreamWriter):
    def __init__(self, path: str) -> None:
        self.root = Path(path)

    def staging(self, batch_id: int) -> Path:
        return self.root / "_staging" / str(batch_id)

    def write(self, iterator: Iterator[Any]) -> StreamedFile:
        ctx = TaskContext.get()
        assert ctx is not None
        batch = int(ctx.getLocalProperty("streaming.sql.batchId") or 0)
        name = f"part-{ctx.partitionId()}-{ctx.attemptNumber()}-{uuid.uuid4().hex}.jsonl"
        target = self.staging(batch) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        rows = 0
        with open(target, "w", encoding="utf-8") as f:  # rows go to disk as they arrive
            for row in iterator:
                f.write(json.dumps(row.asDict()) + "\n")
                rows += 1
            f.flush()
            os.fsync(f.fileno())
        return StreamedFile(batch, name, rows)

    def to_publish(self, messages: Sequence[WriterCommitMessage | None], batch_id: int) -> list[str]:
        """The staging files of ``batch_id`` to publish: exactly those the successful messages name."""
        return sorted(m.file for m in messages if isinstance(m, StreamedFile) and m.batch_id == batch_id)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        manifest = self.root / "_committed" / f"{batchId}.json"
        if not manifest.exists():  # a replay of a published batch changes nothing
            data = self.root / "data" / str(batchId)
            data.mkdir(parents=True, exist_ok=True)
            names = self.to_publish(messages, batchId)
            for name in names:
                src = self.staging(batchId) / name
                if src.exists():
                    os.replace(src, data / name)
            manifest.parent.mkdir(parents=True, exist_ok=True)
            tmp = manifest.with_name(f".{manifest.name}.tmp")
            tmp.write_text(json.dumps({"batch_id": batchId, "files": names}))
            os.replace(tmp, manifest)  # the commit point
        shutil.rmtree(self.staging(batchId), ignore_errors=True)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        shutil.rmtree(self.staging(batchId), ignore_errors=True)


class StreamedStagingSink(DataSource):
    """Format ``jsonl_streamed_staging``; option ``path``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_streamed_staging"

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        return StreamedStagingWriter(str(self.options["path"]))


def read_back(path: str) -> list[dict[str, Any]]:
    """What readers of ``path`` see: the rows of the files each manifest under ``_committed/`` names."""
    root = Path(path)
    rows: list[dict[str, Any]] = []
    committed = root / "_committed"
    for manifest in sorted(committed.glob("[!.]*.json")) if committed.is_dir() else []:
        doc = json.loads(manifest.read_text())
        for name in doc["files"]:
            text = (root / "data" / str(doc["batch_id"]) / name).read_text()
            rows += [json.loads(line) for line in text.splitlines()]
    return rows
