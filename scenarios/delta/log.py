"""A pure-Python reader of a Delta table's transaction log (``<table>/_delta_log``): no Spark, no ``deltalake``.

What it reads (the Delta protocol, as Delta 4.4 on Spark and delta-rs 1.x write it):

- ``NNNNNNNNNNNNNNNNNNNN.json`` (20 digits): commit ``N``, one action per line, a JSON object keyed by its type:
  ``commitInfo`` (``operation``, ``timestamp``), ``txn`` (``appId``, ``version``), ``add`` / ``remove``
  (``path``, URL-encoded), ``metaData``, ``protocol`` and others (skipped).
- Checkpoints, the table's state at version ``N``: ``N.checkpoint.parquet``, multi-part
  ``N.checkpoint.<part>.<parts>.parquet`` (used only when every part exists) and V2
  ``N.checkpoint.<uuid>.parquet|json`` (with its ``_sidecars/``). Read with pyarrow, imported only then.
- Ignored: ``.crc`` sidecars, ``_last_checkpoint``, log compaction files (``N.M.compacted.json``), temp files
  and the ``_staged_commits/``, ``_commits/`` and ``_sidecars/`` directories.

Cleaned-up history: when the oldest JSON commit is ``F > 0`` (older ones deleted by log cleanup), the reader
starts from the oldest complete checkpoint at a version ``C >= F - 1`` and returns it as one synthetic
:class:`Commit` at version ``C`` with ``from_checkpoint=True``: its ``txns`` are the checkpoint's (the newest
version per app id at ``C``), its ``adds`` the live files at ``C``, no removes, no operation or timestamp.
JSON commits up to ``C`` are folded into it; the commits after ``C`` follow one by one. Which batches an
earlier txn covered is then unknown: callers check only from the first txn they see.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from harness.errors import HarnessFailure

LOG_DIR = "_delta_log"
_COMMIT = re.compile(r"^(\d{20})\.json$")
_CHECKPOINT = re.compile(
    r"^(\d{20})\.checkpoint(?:\.(\d{10})\.(\d{10})|\.([0-9a-fA-F]{8}-[0-9a-fA-F-]{27}))?\.(parquet|json)$"
)


class DeltaLogError(HarnessFailure):
    """A Delta log cannot be read: ``path`` names the file (or directory), ``problem`` says what is wrong.

    ``str()`` is one line: ``<path>: <problem>``."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = str(path)
        self.problem = " ".join(problem.split())
        super().__init__(f"{self.path}: {self.problem}")


@dataclass(frozen=True)
class Commit:
    """One Delta version as the log records it (or the synthetic start of a cleaned-up log, see the module)."""

    version: int
    #: ``(appId, version)`` of each ``txn`` action, in log order.
    txns: tuple[tuple[str, int], ...]
    #: ``path`` of each ``add`` / ``remove`` action as written in the log, URL-decoded.
    adds: tuple[str, ...]
    removes: tuple[str, ...]
    #: ``commitInfo.operation`` (``"WRITE"``, ``"MERGE"``, ``"STREAMING UPDATE"``, ...), if recorded.
    operation: str | None
    #: ``commitInfo.timestamp`` (epoch milliseconds), if recorded.
    timestamp_ms: int | None
    #: True for the synthetic commit built from a checkpoint (the history before it was cleaned up).
    from_checkpoint: bool = False


def _commit_path(log: Path, version: int) -> Path:
    return log / f"{version:020d}.json"


def _span(first: int, last: int) -> str:
    return f"version {first}" if first == last else f"versions {first}..{last}"


def _listing(log: Path) -> tuple[list[int], dict[int, list[Path]]]:
    """JSON commit versions, and per version the files of one complete checkpoint."""
    commits: list[int] = []
    parts: dict[tuple[int, str], dict[int, Path]] = {}
    totals: dict[tuple[int, str], int] = {}
    with os.scandir(log) as entries:
        for entry in entries:
            if not entry.is_file():
                continue
            if m := _COMMIT.match(entry.name):
                commits.append(int(m.group(1)))
            elif m := _CHECKPOINT.match(entry.name):
                version, part, total, uuid = int(m.group(1)), m.group(2), m.group(3), m.group(4)
                key = (version, f"multi{int(total)}" if total else (uuid or "single"))
                parts.setdefault(key, {})[int(part) if part else 1] = Path(entry.path)
                totals[key] = int(total) if total else 1
    complete: dict[int, list[Path]] = {}
    for key, files in sorted(parts.items()):
        if len(files) == totals[key] and key[0] not in complete:
            complete[key[0]] = [files[i] for i in sorted(files)]
    return sorted(commits), complete


def is_delta_table(path: str | os.PathLike[str]) -> bool:
    """True when ``path/_delta_log/`` holds at least one commit JSON or checkpoint file."""
    log = Path(path) / LOG_DIR
    try:
        return log.is_dir() and any(_COMMIT.match(n) or _CHECKPOINT.match(n) for n in os.listdir(log))
    except OSError:
        return False


def _actions(path: Path) -> Iterator[tuple[int, str, Any]]:
    """``(line number, action type, body)`` of every action of a JSON commit (or V2 checkpoint) file."""
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DeltaLogError(path, f"not UTF-8 text (garbage bytes at offset {exc.start})") from exc
    except OSError as exc:
        raise DeltaLogError(path, f"cannot be read ({exc.strerror or exc})") from exc
    if not text.strip():
        raise DeltaLogError(path, "is empty (a truncated write or copy)")
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            action = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DeltaLogError(path, f"line {n} is not JSON ({exc.msg} at column {exc.colno})") from exc
        if not isinstance(action, dict):
            raise DeltaLogError(path, f"line {n} is not a JSON object (one action per line)")
        for kind, body in action.items():
            yield n, kind, body


def _txn(path: Path, n: int, body: Any) -> tuple[str, int]:
    if isinstance(body, dict):
        app, version = body.get("appId"), body.get("version")
        if isinstance(app, str) and isinstance(version, int) and not isinstance(version, bool):
            return app, version
    raise DeltaLogError(path, f"line {n}: txn action without a string appId and an integer version")


def _file(path: Path, n: int, kind: str, body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("path"), str):
        return unquote(body["path"])
    raise DeltaLogError(path, f"line {n}: {kind} action without a path")


def _json_actions(path: Path, files: tuple[str, ...]) -> tuple[list[tuple[str, int]], dict[str, list[str]], Any]:
    """One JSON log file's ``txn`` pairs, the paths of its ``files`` actions (``add``, ``remove``, ``sidecar``) by
    kind, and its ``commitInfo`` body (``None`` without one); :class:`DeltaLogError` naming a damaged line."""
    txns: list[tuple[str, int]] = []
    paths: dict[str, list[str]] = {kind: [] for kind in files}
    info: Any = None
    for n, kind, body in _actions(path):
        if kind == "txn":
            txns.append(_txn(path, n, body))
        elif kind in paths:
            paths[kind].append(_file(path, n, kind, body))
        elif kind == "commitInfo" and isinstance(body, dict):
            info = body
    return txns, paths, info


def read_commit(path: str | os.PathLike[str], version: int) -> Commit:
    """Parse one JSON commit file; raises :class:`DeltaLogError` naming it and the line when it is damaged."""
    txns, paths, info = _json_actions(Path(path), ("add", "remove"))
    op, ts = (info.get("operation"), info.get("timestamp")) if info is not None else (None, None)
    operation = op if isinstance(op, str) else None
    timestamp = ts if isinstance(ts, int) and not isinstance(ts, bool) else None
    return Commit(version, tuple(txns), tuple(paths["add"]), tuple(paths["remove"]), operation, timestamp)


def _struct_fields(table: Any, column: str, fields: int) -> list[Any]:
    """The non-null rows of a struct column: ``(appId, version)`` pairs for ``txn``, else ``path`` values."""
    if column not in table.column_names:
        return []
    names = ("appId", "version") if fields == 2 else ("path",)
    values: list[Any] = []
    for chunk in table.column(column).chunks:
        if chunk.null_count == len(chunk):
            continue  # an all-null column may be typed null instead of struct
        picked = [chunk.field(n).filter(chunk.is_valid()).to_pylist() for n in names]
        values += list(zip(*picked, strict=True)) if fields == 2 else picked[0]
    return values


def _parquet_actions(path: Path) -> tuple[list[tuple[str, int]], list[str], list[str]]:
    """``txn`` pairs, ``add`` paths and ``sidecar`` paths of one checkpoint parquet file."""
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow is a dependency of the harness
        raise DeltaLogError(path, "reading a checkpoint needs pyarrow (pip install pyarrow)") from exc
    try:
        names = set(pq.ParquetFile(path).schema_arrow.names)
        table = pq.read_table(path, columns=[c for c in ("txn", "add", "sidecar") if c in names])
        out = {c: _struct_fields(table, c, f) for c, f in (("txn", 2), ("add", 1), ("sidecar", 1))}
        txns = [(str(app), int(version)) for app, version in out["txn"]]
    except Exception as exc:  # pyarrow raises its own types for damaged files
        raise DeltaLogError(path, f"checkpoint cannot be read ({type(exc).__name__}: {exc})") from exc
    return txns, [unquote(str(p)) for p in out["add"]], [str(p) for p in out["sidecar"]]


def _json_checkpoint_actions(path: Path) -> tuple[list[tuple[str, int]], list[str], list[str]]:
    txns, paths, _info = _json_actions(path, ("add", "sidecar"))
    return txns, paths["add"], paths["sidecar"]


def read_checkpoint(log: str | os.PathLike[str], version: int, files: Iterable[Path]) -> Commit:
    """The synthetic :class:`Commit` of a checkpoint (its txns and live files; sidecars followed)."""
    txns: list[tuple[str, int]] = []
    adds: list[str] = []
    for f in files:
        read = _json_checkpoint_actions if f.suffix == ".json" else _parquet_actions
        t, a, sidecars = read(f)
        txns += t
        adds += a
        for name in sidecars:
            sidecar = Path(log) / "_sidecars" / name
            if not sidecar.is_file():
                raise DeltaLogError(sidecar, f"sidecar of checkpoint {f.name} is missing")
            adds += _parquet_actions(sidecar)[1]
    return Commit(version, tuple(txns), tuple(adds), (), None, None, from_checkpoint=True)


def _check_contiguous(log: Path, versions: list[int]) -> None:
    for a, b in pairwise(versions):
        if b > a + 1:
            raise DeltaLogError(
                _commit_path(log, a + 1),
                f"{_span(a + 1, b - 1)} missing between {a} and {b} (a deleted or never-copied commit file)",
            )


def read_log(table: str | os.PathLike[str]) -> list[Commit]:
    """Every commit of the table, ascending by version (see the module for cleaned-up history).

    Raises :class:`DeltaLogError`: ``not a Delta table (no _delta_log)`` when ``table`` is not one, else naming
    the damaged file (a line that is not JSON, a version missing between two others, a checkpoint that cannot
    be read, a start of history no checkpoint covers)."""
    root = Path(table)
    log = root / LOG_DIR
    if not log.is_dir():
        raise DeltaLogError(root, "not a Delta table (no _delta_log)")
    try:
        versions, checkpoints = _listing(log)
    except OSError as exc:
        raise DeltaLogError(log, f"cannot be listed ({exc.strerror or exc})") from exc
    if not versions and not checkpoints:
        raise DeltaLogError(log, "not a Delta table (no commit or checkpoint file in _delta_log)")
    _check_contiguous(log, versions)
    if versions and (newer := [c for c in checkpoints if c > versions[-1]]):
        raise DeltaLogError(
            _commit_path(log, versions[-1] + 1),
            f"{_span(versions[-1] + 1, max(newer))} missing: checkpoint {max(newer)} is newer than "
            f"the newest commit file {versions[-1]}",
        )
    if versions and versions[0] == 0:
        return [read_commit(_commit_path(log, v), v) for v in versions]
    usable = sorted(c for c in checkpoints if not versions or c >= versions[0] - 1)
    if not usable:
        raise DeltaLogError(
            _commit_path(log, 0),
            f"{_span(0, versions[0] - 1)} missing before {versions[0]} and no checkpoint covers them "
            "(a truncated or partly copied log)",
        )
    base = usable[0] if versions else usable[-1]
    head = read_checkpoint(log, base, checkpoints[base])
    return [head] + [read_commit(_commit_path(log, v), v) for v in versions if v > base]


def txn_commits(commits: Iterable[Commit], app_id: str) -> dict[int, list[int]]:
    """txn version -> the Delta versions (ascending) whose commit carried ``txn(app_id, that version)``."""
    found: dict[int, list[int]] = {}
    for c in sorted(commits, key=lambda c: c.version):
        for app, version in c.txns:
            if app == app_id:
                found.setdefault(version, []).append(c.version)
    return found


def adding_versions(commits: Iterable[Commit]) -> dict[str, int]:
    """Data file path -> the Delta version that added it: the latest add wins; files removed later are dropped.

    Within one commit removes apply before adds (a file removed and re-added there stays, with that version)."""
    live: dict[str, int] = {}
    for c in sorted(commits, key=lambda c: c.version):
        for path in c.removes:
            live.pop(path, None)
        for path in c.adds:
            live[path] = c.version
    return live
