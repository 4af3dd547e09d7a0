"""Loading a whole checkpoint (and optionally its file sink) into one model, tolerantly.

A file whose *content* is broken (empty, truncated, garbage, bad version line)
is recorded in :attr:`CheckpointModel.read_errors` for the checks to report;
loading goes on. Only input that cannot be inspected at all raises
:class:`~harness.inspector.checkpoint.CheckpointError`: a path that does not
exist or is not a checkpoint, or a file the operating system refuses to read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from harness.inspector.checkpoint import (
    CheckpointError,
    CommitEntry,
    OffsetEntry,
    QueryMetadata,
    read_commit,
    read_metadata,
    read_offsets,
)
from harness.inspector.crc import ChecksumScan, scan_tree
from harness.inspector.sinklog import CompactibleLog, SinkState, read_sink, read_source_logs
from harness.inspector.state import StateOperator, read_state


@dataclass
class CheckpointModel:
    """Everything read from one checkpoint directory (plus its file sink, if given)."""

    root: Path
    metadata: QueryMetadata | None = None
    metadata_exists: bool = False
    #: Batch ids with a file in offsets/ or commits/ (readable or not).
    offset_ids: list[int] = field(default_factory=list)
    commit_ids: list[int] = field(default_factory=list)
    offsets: dict[int, OffsetEntry] = field(default_factory=dict)
    commits: dict[int, CommitEntry] = field(default_factory=dict)
    #: Files whose content Spark could not parse either (kinds ``corrupt`` / ``version``).
    read_errors: list[CheckpointError] = field(default_factory=list)
    state: list[StateOperator] = field(default_factory=list)
    sources: dict[str, CompactibleLog] = field(default_factory=dict)
    sink_dir: Path | None = None
    sink: SinkState | None = None
    checksums: ChecksumScan = field(default_factory=lambda: ChecksumScan((), (), ()))

    @property
    def query_id(self) -> str | None:
        return self.metadata.query_id if self.metadata else None

    @property
    def last_planned(self) -> int | None:
        return self.offset_ids[-1] if self.offset_ids else None

    @property
    def last_committed(self) -> int | None:
        return self.commit_ids[-1] if self.commit_ids else None

    def rel(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the checkpoint when inside it (for compact messages)."""
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return str(path)


def _log_ids(directory: Path) -> list[int]:
    """Decimal file names in a log directory (what ``HDFSMetadataLog`` treats as batches)."""
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return []
    return sorted(int(e.name) for e in entries if e.name.isascii() and e.name.isdigit() and e.is_file())


def _keep(errors: list[CheckpointError], exc: CheckpointError) -> None:
    if exc.kind in ("io", "missing"):
        raise exc
    errors.append(exc)


def _require_checkpoint(root: Path) -> None:
    if not root.exists():
        raise CheckpointError(root, "does not exist; give the directory passed as checkpointLocation", "missing")
    if not root.is_dir():
        raise CheckpointError(root, "is not a directory; give the directory passed as checkpointLocation", "io")
    if not os.access(root, os.R_OK | os.X_OK):
        raise CheckpointError(root, "cannot be listed (permission denied)", "io")
    if any((root / n).exists() for n in ("metadata", "offsets", "commits")):
        return
    if (root / "_spark_metadata").is_dir():
        raise CheckpointError(
            root, "is a file sink's output directory, not a checkpoint; pass it as --sink-dir with the checkpoint", "io"
        )
    raise CheckpointError(
        root, "is not a Structured Streaming checkpoint (no metadata, offsets/ or commits/); give checkpointLocation"
    )


def load_checkpoint(
    checkpoint: str | os.PathLike[str],
    sink_dir: str | os.PathLike[str] | None = None,
    verify_checksums: bool = True,
) -> CheckpointModel:
    """Read ``checkpoint`` (and the file sink at ``sink_dir``) into a :class:`CheckpointModel`.

    Raises :class:`CheckpointError` (never another exception type for file-system
    problems) when the input cannot be inspected; broken file contents do not raise."""
    root = Path(checkpoint).absolute()
    try:
        return _load(root, sink_dir, verify_checksums)
    except CheckpointError:
        raise
    except OSError as exc:
        where = exc.filename if exc.filename else root
        raise CheckpointError(where, f"cannot be read ({exc.strerror or exc})", "io") from exc


def _load(root: Path, sink_dir: str | os.PathLike[str] | None, verify: bool) -> CheckpointModel:
    _require_checkpoint(root)
    model = CheckpointModel(root=root)
    model.metadata_exists = (root / "metadata").is_file()
    if model.metadata_exists:
        try:
            model.metadata = read_metadata(root)
        except CheckpointError as exc:
            _keep(model.read_errors, exc)
    model.offset_ids = _log_ids(root / "offsets")
    model.commit_ids = _log_ids(root / "commits")
    for bid in model.offset_ids:
        try:
            model.offsets[bid] = read_offsets(root, bid)
        except CheckpointError as exc:
            _keep(model.read_errors, exc)
    for bid in model.commit_ids:
        try:
            model.commits[bid] = read_commit(root, bid)
        except CheckpointError as exc:
            _keep(model.read_errors, exc)
    model.state, state_errors = read_state(root)
    model.read_errors += state_errors
    model.sources = read_source_logs(root)
    for log in model.sources.values():
        model.read_errors += log.errors
    if sink_dir is not None:
        model.sink_dir = Path(sink_dir).absolute()
        if not model.sink_dir.is_dir():
            raise CheckpointError(model.sink_dir, "sink directory does not exist or is not a directory", "missing")
        model.sink = read_sink(model.sink_dir)
        if model.sink is not None:
            model.read_errors += model.sink.log.errors
    scan = scan_tree(root, verify)
    if model.sink_dir is not None and not model.sink_dir.is_relative_to(root):
        extra = scan_tree(model.sink_dir, verify)
        scan = ChecksumScan(
            scan.results + extra.results, scan.orphans + extra.orphans, scan.temp_files + extra.temp_files
        )
    model.checksums = scan
    return model
