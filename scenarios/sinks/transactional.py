"""``transactional_files``: a reference Python streaming sink with exactly-once output.

Copy this into a connector: it is the two-phase protocol Spark's Python
``DataSourceStreamWriter`` API is built for.

Layout under option ``path``::

    _staging/<batch>/part-<partition>-<attempt>-<uuid>.parquet   written by write() (invisible)
    data/batch=<batch>/part-....parquet                           moved here by commit()
    _committed/<batch>.json                                       the marker: written last, atomically

Contract:

- ``write()`` (on executors, once per task attempt) writes the task's rows to a
  new, fsynced staging file and returns a :class:`StagedFile` message naming it.
  Nothing is visible yet; a killed or retried attempt leaves only staging files.
- ``commit(messages, batchId)`` (driver side, in its own Python process) is
  idempotent: if ``_committed/<batchId>.json`` exists the batch was published
  before (Spark re-runs a batch whose ``commits/N`` it did not write), so only
  the new attempt's staging files are removed. Otherwise it moves the files of
  exactly the successful messages into ``data/batch=<batchId>/`` (removing files
  an interrupted earlier publish left there), fsyncs, and then writes the
  marker with ``os.replace``: **the marker is the commit point**.
- ``abort(messages, batchId)`` removes the batch's staging files.
- Readers use :func:`read_visible` (or :func:`visible_files`): only files named
  by a marker exist for them. A plain listing of ``data/`` may show files of a
  publish that was interrupted before its marker, until the batch is re-run.

One query (one checkpoint) per ``path``: batch ids restart at 0 with a new checkpoint.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from scenarios.sinks._files import (
    atomic_write_text,
    fsync_dir,
    read_parquet_rows,
    rows_to_table,
    task_identity,
    write_parquet_durably,
)

FORMAT = "transactional_files"
STAGING = "_staging"
DATA = "data"
COMMITTED = "_committed"


@dataclass(frozen=True)
class StagedFile(WriterCommitMessage):
    """What one successful write task produced: ``file`` (a name inside
    ``_staging/<batch_id>/``, ``None`` if the task had no rows) and ``rows``."""

    batch_id: int
    partition: int
    attempt: int
    file: str | None
    rows: int


def _marker(root: Path, batch_id: int) -> Path:
    return root / COMMITTED / f"{batch_id}.json"


def _staging_dir(root: Path, batch_id: int) -> Path:
    return root / STAGING / str(batch_id)


def is_committed(path: str | Path, batch_id: int) -> bool:
    """Whether batch ``batch_id`` is published under ``path``."""
    return _marker(Path(path), batch_id).exists()


def stage(
    root: Path, schema: StructType, rows: Iterable[Any], batch_id: int, partition: int, attempt: int
) -> StagedFile:
    """Write ``rows`` to a fresh staging file of ``batch_id`` (the body of ``write()``)."""
    table = rows_to_table(rows, schema)
    if table.num_rows == 0:
        return StagedFile(batch_id, partition, attempt, None, 0)
    name = f"part-{partition:05d}-{attempt}-{uuid.uuid4().hex}.parquet"
    write_parquet_durably(table, _staging_dir(root, batch_id) / name)
    return StagedFile(batch_id, partition, attempt, name, table.num_rows)


def publish(root: Path, batch_id: int, messages: Sequence[WriterCommitMessage | None]) -> bool:
    """Publish batch ``batch_id`` from its successful ``messages`` (the body of
    ``commit()``). Returns ``False`` if the batch was already published (no-op).

    Raises ``ValueError`` if a message belongs to another batch and
    ``FileNotFoundError`` if a staged file a message names is gone."""
    staged = [m for m in messages if isinstance(m, StagedFile)]
    wrong = sorted({m.batch_id for m in staged} - {batch_id})
    if wrong:
        raise ValueError(f"transactional sink at {root}: commit of batch {batch_id} got messages of batch(es) {wrong}")
    if _marker(root, batch_id).exists():
        _drop_staging(root, batch_id)
        return False
    data_dir = root / DATA / f"batch={batch_id}"
    data_dir.mkdir(parents=True, exist_ok=True)
    names = {m.file for m in staged if m.file}
    for leftover in data_dir.iterdir():  # from a publish interrupted before its marker: never visible
        if leftover.name not in names:
            leftover.unlink()
    for name in sorted(names):
        src, dst = _staging_dir(root, batch_id) / name, data_dir / name
        if src.exists():
            src.replace(dst)
        elif not dst.exists():
            raise FileNotFoundError(
                f"transactional sink at {root}: staged file {src} of batch {batch_id} is missing; "
                "was the _staging directory cleaned while the query ran?"
            )
    fsync_dir(data_dir)
    (root / COMMITTED).mkdir(parents=True, exist_ok=True)
    manifest = {
        "batch_id": batch_id,
        "files": [f"{DATA}/batch={batch_id}/{n}" for n in sorted(names)],
        "rows": sum(m.rows for m in staged),
    }
    atomic_write_text(_marker(root, batch_id), json.dumps(manifest, indent=1))
    _drop_staging(root, batch_id)
    return True


def discard(root: Path, batch_id: int) -> None:
    """Remove what write() staged for ``batch_id`` (the body of ``abort()``)."""
    _drop_staging(root, batch_id)


def _drop_staging(root: Path, batch_id: int) -> None:
    shutil.rmtree(_staging_dir(root, batch_id), ignore_errors=True)


def committed_batches(path: str | Path) -> list[int]:
    """Published batch ids under ``path``, ascending."""
    directory = Path(path) / COMMITTED
    if not directory.is_dir():
        return []
    return sorted(int(p.stem) for p in directory.glob("*.json") if p.stem.isdigit())


def visible_files(path: str | Path) -> list[Path]:
    """The data files readers may see: those named by a batch marker, in batch order."""
    root = Path(path)
    files = []
    for batch_id in committed_batches(root):
        manifest = json.loads(_marker(root, batch_id).read_text())
        files += [root / f for f in manifest["files"]]
    return files


def read_visible(path: str | Path) -> list[dict[str, Any]]:
    """Exactly the rows of published batches under ``path`` (timestamps timezone-aware)."""
    return [row for f in visible_files(path) for row in read_parquet_rows(f)]


class TransactionalStreamWriter(DataSourceStreamWriter):
    """Stages in ``write()``, publishes atomically and idempotently in ``commit()``."""

    def __init__(self, path: str, schema: StructType) -> None:
        self.path = path
        self.schema = schema

    def write(self, iterator: Iterator[Any]) -> StagedFile:
        batch_id, partition, attempt = task_identity()
        return stage(Path(self.path), self.schema, iterator, batch_id, partition, attempt)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        publish(Path(self.path), batchId, messages)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        discard(Path(self.path), batchId)


class TransactionalFileSink(DataSource):
    """Format ``transactional_files``; option ``path`` (required): the sink's directory."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        path = self.options.get("path")
        if not path:
            raise ValueError(f"{FORMAT} sink: set option 'path' to the directory the sink owns")
        return TransactionalStreamWriter(str(path), schema)
