"""A run's story for the timeline picture: drivers, batches, kills, data, anomalies.

Built from what every run directory holds (the runner's and the end-to-end
source runs' alike): ``history.jsonl`` (driver starts, data rounds, kills,
crashes, failed commands) and the checkpoint (``offsets/N`` and ``commits/N``
with their modification times and the offsets they record). A batch is
*replayed* when a kill hit it before ``commits/N`` existed; it is *committed
by* the driver alive when ``commits/N`` was written.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fault_injectors.actions import DEFAULT
from harness.engine.history import read_history
from harness.inspector import CheckpointError, read_batches


@dataclass
class DriverSpan:
    name: str
    ready_ns: int
    startup_s: float
    end_ns: int | None = None
    ended: str = "running"  # killed | exited | failed
    reused: bool = False  # already running when the run started (a shared driver pool)


@dataclass
class BatchBox:
    batch_id: int
    planned_ns: int | None
    committed_ns: int | None
    start: str
    end: str
    committed_by: str | None = None
    kills: list[str] = field(default_factory=list)  # crash points that hit this batch
    anomalies: dict[str, int] = field(default_factory=dict)

    @property
    def replayed(self) -> bool:
        return bool(self.kills) and self.committed_ns is not None


@dataclass
class Timeline:
    title: str
    verdict: str
    t0_ns: int
    drivers: list[DriverSpan] = field(default_factory=list)
    batches: list[BatchBox] = field(default_factory=list)
    kills: list[dict[str, Any]] = field(default_factory=list)
    data: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    unlocated: dict[str, int] = field(default_factory=dict)  # anomalies without a batch

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Timeline:
        t = cls(raw["title"], raw["verdict"], raw["t0_ns"])
        t.drivers = [DriverSpan(**d) for d in raw.get("drivers", [])]
        t.batches = [BatchBox(**b) for b in raw.get("batches", [])]
        t.kills, t.data = list(raw.get("kills", [])), list(raw.get("data", []))
        t.failures, t.unlocated = list(raw.get("failures", [])), dict(raw.get("unlocated", {}))
        return t


def _offset_text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, dict) and all(isinstance(v, int | float) for v in value.values()):
        return " ".join(f"{k}:{v}" for k, v in value.items())
    return json.dumps(value, separators=(",", ":"))


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def build_timeline(
    run_dir: str | os.PathLike[str], title: str, verdict: str, anomalies: Iterable[Mapping[str, Any]] = ()
) -> Timeline:
    """The timeline of a finished run; ``anomalies``: dicts with ``kind``, ``batch_id``
    and optionally ``count`` (default 1 row each)."""
    root = Path(run_dir)
    events = read_history(root / "history.jsonl") if (root / "history.jsonl").exists() else []
    t0 = events[0].time_ns if events else 0
    tl = Timeline(title, verdict, t0)
    for ev in events:
        if ev.process.startswith("driver") and not any(d.name == ev.process for d in tl.drivers):
            tl.drivers.append(DriverSpan(ev.process, ev.time_ns, 0.0, reused=True))  # a shared pool's live driver
        if ev.f == "start_driver" and ev.type == "ok":
            tl.drivers.append(DriverSpan(ev.value["driver"], ev.time_ns, float(ev.value.get("startup_s", 0.0))))
        elif ev.f == "add_data":
            tl.data.append({"time_ns": ev.time_ns, "label": f"+data {ev.value.get('round', '')}".strip()})
        elif ev.f == "kill":
            rule = ev.value.get("rule", {})
            tl.kills.append(
                {
                    "time_ns": ev.time_ns,
                    "batch": ev.value.get("batch"),
                    "point": rule.get("point", "?"),
                    "action": rule.get("action", DEFAULT),
                    "driver": ev.process,
                    "commit_logged": ev.value.get("context", {}).get("commit_logged"),
                }
            )
        elif ev.f == "crash":
            _end(tl, ev.process, ev.time_ns, "killed")
        elif ev.type == "fail" and ev.process.startswith("driver"):
            tl.failures.append({"time_ns": ev.time_ns, "driver": ev.process, "message": ev.value.get("message", "")})
            _end(tl, ev.process, ev.time_ns, "failed")
    if events:
        for d in tl.drivers:
            if d.end_ns is None:
                d.end_ns, d.ended = events[-1].time_ns, "exited"
    tl.batches = _batches(root / "checkpoint", tl)
    for a in anomalies:
        n = int(a.get("count", 1))
        box = next((b for b in tl.batches if b.batch_id == a.get("batch_id")), None)
        target = box.anomalies if box is not None else tl.unlocated
        target[a["kind"]] = target.get(a["kind"], 0) + n
    return tl


def checkpoint_timeline(checkpoint: str | os.PathLike[str], title: str, verdict: str) -> Timeline:
    """The timeline of a checkpoint alone (no run history): its batches, their offsets and commit times."""
    tl = Timeline(title, verdict, 0)
    tl.batches = _batches(Path(checkpoint), tl)
    tl.t0_ns = min((b.planned_ns for b in tl.batches if b.planned_ns), default=0)
    return tl


def _end(tl: Timeline, name: str, t: int, how: str) -> None:
    for d in tl.drivers:
        if d.name == name and d.end_ns is None:
            d.end_ns, d.ended = t, how


def _batches(checkpoint: Path, tl: Timeline) -> list[BatchBox]:
    try:
        records = read_batches(checkpoint)
    except (CheckpointError, OSError):
        return []
    boxes = []
    for rec in records:
        src = rec.offsets.sources[0] if rec.offsets and rec.offsets.sources else None
        start = rec.start[0] if rec.start else None
        committed = _mtime(checkpoint / "commits" / str(rec.batch_id)) if rec.committed else None
        box = BatchBox(
            rec.batch_id,
            _mtime(checkpoint / "offsets" / str(rec.batch_id)),
            committed,
            _offset_text(start),
            _offset_text(src),
        )
        if committed is not None:
            alive = [d for d in tl.drivers if d.ready_ns - int(d.startup_s * 1e9) <= committed]
            box.committed_by = alive[-1].name if alive else None
        box.kills = [k["point"] for k in tl.kills if k["batch"] == rec.batch_id]
        boxes.append(box)
    return boxes


def anomaly_counts(anomalies: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Runner/checker anomalies (one per distinct row) -> ``{kind, batch_id, count}`` rows."""
    c: Counter[tuple[str, Any]] = Counter()
    for a in anomalies:
        extra = abs(int(a.get("observed_count", 1)) - int(a.get("expected_count", 0))) or 1
        c[(a["kind"], a.get("batch_id"))] += extra
    return [{"kind": k, "batch_id": b, "count": n} for (k, b), n in c.items()]
