"""Diff of two checkpoints, or of one checkpoint at two times.

Either side is a checkpoint directory or a JSON file written earlier by
``python -m harness inspect CHECKPOINT --json`` (that is how one checkpoint is
compared with itself later). B is read as the later state. A difference is a
*conflict* when B cannot be a continuation of A: another query id, a batch both
record with different offsets or watermark (a replay that diverged), a commit or
sink file that disappeared, batches that vanished (a rollback). New batches,
new commits and new sink files are progress, not conflicts.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.inspector.checkpoint import CheckpointError


@dataclass(frozen=True)
class BatchSnap:
    batch_id: int
    committed: bool
    #: ``(source, end offset as compact JSON)`` per source; ``None`` when offsets/N is unreadable.
    ends: tuple[tuple[str, str], ...] | None
    watermark_ms: int | None
    timestamp_ms: int | None
    next_watermark_ms: int | None


@dataclass(frozen=True)
class Snapshot:
    """What a diff compares, from a live checkpoint or a saved ``--json`` document."""

    label: str
    query_id: str | None
    batches: dict[int, BatchSnap]
    conf: dict[str, str] = field(default_factory=dict)
    #: operator id -> newest state version on disk.
    state_versions: dict[int, int | None] = field(default_factory=dict)
    #: Live sink files (``None`` when no sink was inspected).
    sink_files: frozenset[str] | None = None


def snapshot_from_json(doc: dict[str, Any], label: str) -> Snapshot:
    """A :class:`Snapshot` from :func:`harness.inspector.render.report_json` output."""
    batches = {}
    for b in doc.get("batches", []):
        planned = b.get("status") in ("committed", "planned")
        ends = tuple((s["source"], json.dumps(s["end"], sort_keys=True)) for s in b.get("sources", []))
        batches[int(b["batch_id"])] = BatchSnap(
            int(b["batch_id"]),
            bool(b.get("committed")),
            ends if planned else None,
            b.get("watermark_ms"),
            b.get("timestamp_ms"),
            b.get("next_watermark_ms"),
        )
    versions = {
        int(op["operator_id"]): max((v for s in op.get("stores", []) for v in s.get("versions", [])), default=None)
        for op in doc.get("state", [])
    }
    sink = doc.get("sink")
    return Snapshot(
        label,
        doc.get("query_id"),
        batches,
        dict(doc.get("conf") or {}),
        versions,
        frozenset(sink["live_files"]) if sink else None,
    )


def load_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    """A checkpoint directory (inspected now) or a saved JSON report; raises :class:`CheckpointError`."""
    p = Path(path)
    if p.is_file():
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CheckpointError(p, f"not a JSON report of `python -m harness inspect --json` ({exc})") from exc
        if not isinstance(doc, dict) or "batches" not in doc:
            raise CheckpointError(p, "not a JSON report of `python -m harness inspect --json` (no 'batches')")
        return snapshot_from_json(doc, str(p))
    from harness.inspector.inspection import inspect_checkpoint
    from harness.inspector.render import report_json

    return snapshot_from_json(report_json(inspect_checkpoint(p, verify_checksums=False)), str(p))


@dataclass(frozen=True)
class DiffItem:
    kind: str
    text: str
    conflict: bool
    batch_id: int | None = None


@dataclass(frozen=True)
class CheckpointDiff:
    a: Snapshot
    b: Snapshot
    items: tuple[DiffItem, ...]

    @property
    def conflicts(self) -> tuple[DiffItem, ...]:
        return tuple(i for i in self.items if i.conflict)

    @property
    def exit_code(self) -> int:
        """0 when B is a consistent continuation of A (or identical), 1 otherwise."""
        return 1 if self.conflicts else 0


def _range(ids: list[int]) -> str:
    return str(ids[0]) if len(ids) == 1 else f"{ids[0]}..{ids[-1]} ({len(ids)})"


def diff_snapshots(a: Snapshot, b: Snapshot) -> CheckpointDiff:
    """Compare ``a`` (earlier) with ``b`` (later)."""
    items: list[DiffItem] = []
    if a.query_id != b.query_id:
        items.append(DiffItem("query-id", f"query id differs: {a.query_id} vs {b.query_id}", True))
    b_first = min(b.batches) if b.batches else None
    gone = [i for i in sorted(a.batches) if i not in b.batches]
    purged = [i for i in gone if b_first is not None and i < b_first]
    vanished = [i for i in gone if i not in purged]
    if purged:
        items.append(DiffItem("purged", f"batches {_range(purged)} purged in B (older than its first batch)", False))
    if vanished:
        items.append(DiffItem("vanished", f"batches {_range(vanished)} are in A but not in B: rolled back?", True))
    new = [i for i in sorted(b.batches) if i not in a.batches]
    if new:
        done = sum(1 for i in new if b.batches[i].committed)
        items.append(DiffItem("new", f"batches {_range(new)} new in B ({done} committed)", False))
    for bid in sorted(set(a.batches) & set(b.batches)):
        items += _batch(a.batches[bid], b.batches[bid])
    for key in sorted(set(a.conf) & set(b.conf)):
        if a.conf[key] != b.conf[key]:
            items.append(DiffItem("conf", f"{key}: {a.conf[key]!r} -> {b.conf[key]!r}", True))
    for op in sorted(set(a.state_versions) | set(b.state_versions)):
        va, vb = a.state_versions.get(op), b.state_versions.get(op)
        if va != vb:
            back = op not in b.state_versions or (va is not None and (vb is None or vb < va))
            items.append(DiffItem("state", f"operator {op}: newest state version {va} -> {vb}", back))
    if a.sink_files is not None and b.sink_files is not None:
        lost, added = a.sink_files - b.sink_files, b.sink_files - a.sink_files
        if added:
            items.append(DiffItem("sink", f"{len(added)} sink file(s) added", False))
        if lost:
            items.append(DiffItem("sink", f"{len(lost)} sink file(s) no longer listed, e.g. {sorted(lost)[0]}", True))
    return CheckpointDiff(a, b, tuple(items))


def _batch(x: BatchSnap, y: BatchSnap) -> list[DiffItem]:
    bid, out = x.batch_id, []
    if x.ends is not None and y.ends is not None and x.ends != y.ends:
        out.append(
            DiffItem(
                "offsets",
                f"batch {bid} planned with different offsets: {dict(x.ends)} vs {dict(y.ends)} "
                "(a replay that diverged: the same batch id covers different input)",
                True,
                bid,
            )
        )
    if x.watermark_ms != y.watermark_ms and None not in (x.watermark_ms, y.watermark_ms):
        out.append(DiffItem("watermark", f"batch {bid} watermark {x.watermark_ms} -> {y.watermark_ms}", True, bid))
    elif x.timestamp_ms != y.timestamp_ms and None not in (x.timestamp_ms, y.timestamp_ms):
        out.append(DiffItem("replanned", f"batch {bid} was re-planned (batchTimestampMs changed)", False, bid))
    if x.committed and not y.committed:
        out.append(DiffItem("commit", f"batch {bid} was committed in A but not in B", True, bid))
    elif y.committed and not x.committed:
        out.append(DiffItem("commit", f"batch {bid} committed in B", False, bid))
    if x.committed and y.committed and x.next_watermark_ms != y.next_watermark_ms:
        text = f"batch {bid} nextBatchWatermarkMs {x.next_watermark_ms} -> {y.next_watermark_ms}"
        out.append(DiffItem("commit", text, True, bid))
    return out


def render_diff(d: CheckpointDiff) -> str:
    head = (
        f"B is {'NOT ' if d.conflicts else ''}a consistent continuation of A: "
        f"{len(d.conflicts)} conflict(s), {len(d.items) - len(d.conflicts)} other difference(s)"
    )
    lines = [head, f"A: {d.a.label}", f"B: {d.b.label}"]
    lines += [f"  {'!' if i.conflict else ' '} [{i.kind}] {i.text}" for i in d.items]
    if not d.items:
        lines.append("  (no differences)")
    return "\n".join(lines)


def diff_json(d: CheckpointDiff) -> dict[str, Any]:
    return {
        "a": d.a.label,
        "b": d.b.label,
        "consistent": not d.conflicts,
        "exit_code": d.exit_code,
        "items": [{"kind": i.kind, "text": i.text, "conflict": i.conflict, "batch_id": i.batch_id} for i in d.items],
    }
