"""Compactible metadata logs: a file sink's ``<out>/_spark_metadata/`` and a file
source's ``<checkpoint>/sources/<id>/`` (Spark's ``CompactibleFileStreamLog``).

Format: one file per batch, ``N``, holding ``v1`` then one JSON object per line;
every ``compactInterval`` batches (default 10) a ``N.compact`` file whose
``(N + 1) % interval == 0`` holds every live entry so far, after which older files
may be deleted. Sink entries are ``{"path": <absolute URI>, "size", "isDir",
"modificationTime", "blockReplication", "blockSize", "action": "add"|"delete"}``;
source entries are ``{"path", "timestamp", "batchId"}``. Readers of the sink see
exactly the files of the latest compact file plus later batch files, minus deletes
(``allFiles``): a data file the log does not name is invisible to them.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from harness.inspector.checkpoint import CheckpointError

_LOG_FILE = re.compile(r"^(\d+)(\.compact)?$")
#: ``FileStreamSinkLog.VERSION`` / ``FileStreamSourceLog.VERSION``.
LOG_VERSION = 1


@dataclass(frozen=True)
class LogBatch:
    """One readable log file."""

    batch_id: int
    compact: bool
    path: Path
    entries: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class CompactibleLog:
    """A compactible log directory: its readable batches and the files that are not."""

    directory: Path
    batches: dict[int, LogBatch]
    errors: tuple[CheckpointError, ...] = ()
    #: Batch ids whose file exists but could not be read.
    unreadable: frozenset[int] = frozenset()

    @cached_property
    def ids(self) -> list[int]:
        return sorted(set(self.batches) | self.unreadable)

    @cached_property
    def latest_compact(self) -> int | None:
        ids = [b for b, lb in self.batches.items() if lb.compact]
        return max(ids) if ids else None

    @cached_property
    def _first_listed(self) -> dict[str, int]:
        first: dict[str, int] = {}
        for b in sorted(self.batches):
            for e in self.batches[b].entries:
                first.setdefault(str(e.get("path")), b)
        return first

    def covers(self, batch_id: int) -> bool:
        """Is ``batch_id`` recorded: its own file, or folded into a later compact file?"""
        if batch_id in self.batches or batch_id in self.unreadable:
            return True
        lc = self.latest_compact
        return lc is not None and batch_id <= lc

    def live_entries(self) -> list[dict[str, Any]]:
        """What Spark's ``allFiles()`` returns: the latest compact file, later batches, minus deletes."""
        lc = self.latest_compact
        start = lc if lc is not None else -1
        entries = [e for b in sorted(self.batches) if b >= start for e in self.batches[b].entries]
        deleted = {e.get("path") for e in entries if e.get("action") == "delete"}
        return [e for e in entries if e.get("action", "add") != "delete" and e.get("path") not in deleted]

    def added_by(self, batch_id: int) -> int | None:
        """Number of entries batch ``batch_id`` added (for a compact file: those not
        listed by any earlier readable batch); ``None`` if the batch is not readable."""
        lb = self.batches.get(batch_id)
        if lb is None:
            return None
        if not lb.compact:
            return sum(1 for e in lb.entries if e.get("action", "add") == "add")
        first = self._first_listed
        return sum(1 for e in lb.entries if first.get(str(e.get("path"))) == batch_id)


def _parse(path: Path, max_version: int) -> tuple[dict[str, Any], ...]:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointError(path, f"not UTF-8 text (garbage bytes at offset {exc.start})") from exc
    except OSError as exc:
        raise CheckpointError(path, f"unreadable ({exc.strerror or exc})", "io") from exc
    text = text.removeprefix("\x00")  # Kafka's initial-offset log starts with a 0 byte (SPARK-19517)
    lines = text.split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise CheckpointError(path, "file is empty (a crash while writing it, or a truncated copy)")
    head = lines[0].strip()
    if not (head.startswith("v") and head[1:].isdigit()) or int(head[1:]) <= 0:
        raise CheckpointError(path, f"first line should be a log version like 'v1', found {head[:40]!r}", "version")
    if int(head[1:]) > max_version:
        raise CheckpointError(path, f"log version {head} is newer than Spark 4.3 reads (v1..v{max_version})", "version")
    try:  # one parser call for the whole file (compact files hold thousands of lines)
        parsed = json.loads("[" + ",".join(lines[1:]) + "]")
        if len(parsed) != len(lines) - 1:
            raise ValueError("a line holds more than one value")
    except ValueError:
        parsed = []
        for n, line in enumerate(lines[1:], start=2):
            try:
                parsed.append(json.loads(line))
            except json.JSONDecodeError as exc:
                msg = f"line {n} is not valid JSON ({exc.msg}): a truncated or edited file"
                raise CheckpointError(path, msg) from exc
    return tuple(e if isinstance(e, dict) else {"value": e} for e in parsed)


def read_log(directory: str | os.PathLike[str], max_version: int = LOG_VERSION) -> CompactibleLog:
    """Read every batch file of a compactible log. Unreadable files are collected in
    ``errors`` (kind ``corrupt``); I/O errors (kind ``io``) are raised."""
    d = Path(directory)
    batches: dict[int, LogBatch] = {}
    errors: list[CheckpointError] = []
    bad: set[int] = set()
    try:
        names = os.listdir(d)
    except FileNotFoundError:
        return CompactibleLog(d, {})
    for name in sorted(names):
        m = _LOG_FILE.match(name)
        if not m or not (d / name).is_file():
            continue
        bid, compact = int(m.group(1)), m.group(2) is not None
        if bid in batches and batches[bid].compact:
            continue
        try:
            batches[bid] = LogBatch(bid, compact, d / name, _parse(d / name, max_version))
            bad.discard(bid)
        except CheckpointError as exc:
            if exc.kind == "io":
                raise
            errors.append(exc)
            bad.add(bid)
    return CompactibleLog(d, batches, tuple(errors), frozenset(bad))


def uri_to_path(uri: str) -> Path | None:
    """A local path for a ``file:`` URI (or a plain path); ``None`` for remote schemes."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return Path(unquote(parsed.path))
    return None


def _hidden(name: str) -> bool:
    # Spark's data-file listing skips names starting with "." or "_" (partition dirs contain "=").
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def data_files(sink_dir: str | os.PathLike[str]) -> list[Path]:
    """Every file a reader could see in ``sink_dir`` (recursively), skipping hidden names."""
    found = []
    for dirpath, dirs, files in os.walk(sink_dir):
        dirs[:] = sorted(x for x in dirs if not _hidden(x))
        found += [Path(dirpath) / f for f in sorted(files) if not _hidden(f)]
    return found


@dataclass(frozen=True)
class SinkState:
    """A file sink's output directory as readers see it."""

    directory: Path
    log: CompactibleLog
    #: Files on disk a reader could list (not hidden).
    files: tuple[Path, ...]


def read_sink(sink_dir: str | os.PathLike[str]) -> SinkState | None:
    """The file sink at ``sink_dir``, or ``None`` if it has no ``_spark_metadata`` log."""
    d = Path(sink_dir)
    if not (d / "_spark_metadata").is_dir():
        return None
    return SinkState(d, read_log(d / "_spark_metadata"), tuple(data_files(d)))


def read_source_logs(checkpoint: str | os.PathLike[str]) -> dict[str, CompactibleLog]:
    """``sources/<id>/`` logs (file sources; Kafka's initial offsets), by source id."""
    root = Path(checkpoint) / "sources"
    if not root.is_dir():
        return {}
    return {name: read_log(root / name) for name in sorted(os.listdir(root)) if (root / name).is_dir()}
