"""Typed, Spark-free reader of a Structured Streaming checkpoint's logs.

Formats (Spark 4.x, ``HDFSMetadataLog`` / ``OffsetSeqLog`` / ``CommitLog``):

- ``metadata``: one JSON line ``{"id": "<query id>"}``.
- ``offsets/N``: a version line (``v1`` or ``v2``), a JSON line of batch
  metadata (``batchWatermarkMs``, ``batchTimestampMs``, ``conf``), then one
  line per source: its offset JSON, or ``-`` when the source has none yet.
  (v2 writes ``sourceId:offset`` lines.)
- ``commits/N``: a version line then ``{"nextBatchWatermarkMs": ...}``
  (v2 adds ``stateUniqueIds``; v3, new in Spark 4.1+, adds ``sinkMetadataMap``).

Batch files are named by their decimal batch id; ``.crc`` sidecars, hidden
files and temp files are not batches.

Spark 4.3 accepts offsets up to v2 and commits up to v3 (``OffsetSeqLog.MAX_VERSION``,
``CommitLog.MAX_VERSION``); so does this reader.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessFailure

#: Highest log versions Spark 4.3 reads (``OffsetSeqLog.MAX_VERSION``, ``CommitLog.MAX_VERSION``).
MAX_OFFSETS_VERSION = 2
MAX_COMMITS_VERSION = 3
#: Spark's rule for source names in v2 offsets (``OffsetSeqV2.validateSourceName``).
_SOURCE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class CheckpointError(HarnessFailure, RuntimeError):
    """A checkpoint file cannot be read or parsed; ``path`` names the file.

    ``kind`` says why: ``"corrupt"`` (the content is not what Spark writes: empty,
    truncated, garbage), ``"version"`` (a malformed or too new version line),
    ``"missing"`` (the file does not exist) or ``"io"`` (the operating system
    refused to read it, e.g. permissions)."""

    def __init__(self, path: str | os.PathLike[str], problem: str, kind: str = "corrupt") -> None:
        self.path = str(path)
        self.problem = problem
        self.kind = kind
        super().__init__(f"{self.path}: {problem}")


def batch_ids(log_dir: str | os.PathLike[str]) -> list[int]:
    """Sorted batch ids present in a metadata log directory (``offsets``,
    ``commits``, a sink's ``_spark_metadata``); ``[]`` if it does not exist.
    ``N.compact`` counts as batch ``N``."""
    try:
        names = os.listdir(log_dir)
    except FileNotFoundError:
        return []
    ids = []
    for name in names:
        stem = name[: -len(".compact")] if name.endswith(".compact") else name
        if stem.isascii() and stem.isdigit():
            ids.append(int(stem))
    return sorted(ids)


def latest_batch_id(checkpoint: str | os.PathLike[str]) -> int | None:
    """Highest batch id in ``offsets/``, or ``None`` before the first batch."""
    ids = batch_ids(Path(checkpoint) / "offsets")
    return ids[-1] if ids else None


@dataclass(frozen=True)
class OffsetEntry:
    """One ``offsets/N`` file."""

    batch_id: int
    version: int
    watermark_ms: int
    timestamp_ms: int
    conf: dict[str, str]
    #: One entry per source in query order: the parsed offset JSON, or ``None`` for ``-``.
    sources: tuple[Any, ...]
    #: v2 only: source ids in the same order as ``sources``.
    source_ids: tuple[str, ...] = ()
    #: v2 metadata only: ``sourceMetadataInfo`` (source id -> provider info).
    source_metadata: dict[str, Any] = field(default_factory=dict)

    def source_keys(self) -> tuple[str, ...]:
        """Stable per-source keys: the v2 source ids, else the positions ``"0"``, ``"1"``, ..."""
        return self.source_ids if self.source_ids else tuple(str(i) for i in range(len(self.sources)))


@dataclass(frozen=True)
class CommitEntry:
    """One ``commits/N`` file."""

    batch_id: int
    version: int
    next_watermark_ms: int
    state_unique_ids: dict[str, Any] = field(default_factory=dict)
    #: v3 only: ``sinkMetadataMap`` (sink name -> commit offset / provider info).
    sink_metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QueryMetadata:
    """The checkpoint's ``metadata`` file: the query id that every restart reuses."""

    query_id: str


def _lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise CheckpointError(path, "file does not exist", "missing") from exc
    except UnicodeDecodeError as exc:
        raise CheckpointError(path, f"not UTF-8 text (garbage bytes at offset {exc.start})") from exc
    except OSError as exc:
        raise CheckpointError(path, f"unreadable ({exc.strerror or exc})", "io") from exc
    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise CheckpointError(path, "file is empty (a crash while writing it, or a truncated copy)")
    return lines


def _version(path: Path, line: str, max_supported: int = MAX_OFFSETS_VERSION) -> int:
    line = line.strip()
    if not (line.startswith("v") and line[1:].isdigit()) or int(line[1:]) <= 0:
        raise CheckpointError(path, f"first line should be a log version like 'v1', found {line[:40]!r}", "version")
    v = int(line[1:])
    if v > max_supported:
        raise CheckpointError(
            path,
            f"log version v{v} is newer than Spark 4.3 reads (v1..v{max_supported}); Spark refuses this file",
            "version",
        )
    return v


def _json(path: Path, line: str, what: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise CheckpointError(path, f"{what} is not valid JSON ({exc.msg} at column {exc.colno})") from exc


def read_offsets(checkpoint: str | os.PathLike[str], batch_id: int) -> OffsetEntry:
    """Parse ``offsets/<batch_id>``; raises :class:`CheckpointError` naming the file."""
    path = Path(checkpoint) / "offsets" / str(batch_id)
    lines = _lines(path)
    version = _version(path, lines[0])
    if len(lines) < 2:
        raise CheckpointError(path, "batch metadata line is missing (truncated file)")
    # Spark treats an empty metadata line as "no metadata" (all defaults).
    meta = _json(path, lines[1], "batch metadata line") if lines[1].strip() else {}
    if not isinstance(meta, dict):
        raise CheckpointError(path, "batch metadata line should be a JSON object")
    sources: list[Any] = []
    source_ids: list[str] = []
    for line in lines[2:]:
        if version >= 2:
            sid, colon, line = line.partition(":")
            if not colon or not _SOURCE_ID.match(sid):
                raise CheckpointError(path, f"v2 source line should be 'sourceId:offset', found {sid[:40]!r}")
            source_ids.append(sid)
        sources.append(None if line.strip() == "-" else _json(path, line, "source offset line"))
    return OffsetEntry(
        batch_id=batch_id,
        version=version,
        watermark_ms=int(meta.get("batchWatermarkMs", 0)),
        timestamp_ms=int(meta.get("batchTimestampMs", 0)),
        conf={str(k): str(v) for k, v in (meta.get("conf") or {}).items()},
        sources=tuple(sources),
        source_ids=tuple(source_ids),
        source_metadata=dict(meta.get("sourceMetadataInfo") or {}),
    )


def read_commit(checkpoint: str | os.PathLike[str], batch_id: int) -> CommitEntry:
    """Parse ``commits/<batch_id>``; raises :class:`CheckpointError` naming the file."""
    path = Path(checkpoint) / "commits" / str(batch_id)
    lines = _lines(path)
    version = _version(path, lines[0], MAX_COMMITS_VERSION)
    if len(lines) < 2:
        raise CheckpointError(
            path, "commit metadata line is missing (truncated file; Spark would read nextBatchWatermarkMs=0)"
        )
    meta = _json(path, lines[1], "commit metadata line")
    if not isinstance(meta, dict):
        raise CheckpointError(path, "commit metadata line should be a JSON object")
    return CommitEntry(
        batch_id=batch_id,
        version=version,
        next_watermark_ms=int(meta.get("nextBatchWatermarkMs", 0)),
        state_unique_ids=dict(meta.get("stateUniqueIds") or {}),
        sink_metadata=dict(meta.get("sinkMetadataMap") or {}),
    )


def read_metadata(checkpoint: str | os.PathLike[str]) -> QueryMetadata:
    """Parse the checkpoint's ``metadata`` file (``{"id": ...}``); raises :class:`CheckpointError`."""
    path = Path(checkpoint) / "metadata"
    lines = _lines(path)
    meta = _json(path, lines[0], "metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("id"), str) or not meta["id"]:
        raise CheckpointError(path, 'should be a JSON object with the query id, like {"id": "<uuid>"}')
    return QueryMetadata(meta["id"])


@dataclass(frozen=True)
class BatchRecord:
    """A batch as the checkpoint records it: planned (offsets) and maybe committed."""

    batch_id: int
    offsets: OffsetEntry | None
    commit: CommitEntry | None
    #: Per source, the end offset of the previous planned batch (``None`` for the first).
    start: tuple[Any, ...] = ()

    @property
    def committed(self) -> bool:
        return self.commit is not None


def read_batches(checkpoint: str | os.PathLike[str]) -> list[BatchRecord]:
    """All batches that appear in ``offsets/`` or ``commits/``, in id order,
    with each batch's per-source start offsets (the previous batch's end)."""
    ckpt = Path(checkpoint)
    off_ids = batch_ids(ckpt / "offsets")
    com_ids = set(batch_ids(ckpt / "commits"))
    records: list[BatchRecord] = []
    prev_end: tuple[Any, ...] = ()
    for bid in sorted(set(off_ids) | com_ids):
        offsets = read_offsets(ckpt, bid) if bid in off_ids else None
        commit = read_commit(ckpt, bid) if bid in com_ids else None
        start = prev_end if offsets is not None else ()
        if offsets is not None and not start:
            start = tuple(None for _ in offsets.sources)
        records.append(BatchRecord(bid, offsets, commit, start))
        if offsets is not None:
            prev_end = offsets.sources
    return records
