"""The exactly-once checker: a pure function of expected rows, observed rows,
the batches the checkpoint records and the faults the history records.

Rows are compared as multisets (never ``distinct()``: that hides duplicates).
Each difference becomes an :class:`Anomaly` traced through its provenance
columns to the batch that covered its offset and the last fault at or before
that batch. The checker never raises: an internal error yields
``valid="unknown"``, never a pass.
"""

from __future__ import annotations

import bisect
import traceback
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

Verdict = Literal["exactly-once", "violated", "unknown"]
KINDS = ("lost", "duplicate", "phantom", "replay-divergent")


@dataclass(frozen=True)
class BatchSpan:
    """Offsets ``[start[p], end[p])`` per source partition covered by one batch."""

    batch_id: int
    start: Mapping[int, int]
    end: Mapping[int, int]
    committed: bool = True


@dataclass(frozen=True)
class FaultRef:
    """A fault that fired, as the history records it."""

    history_index: int
    batch_id: int
    point: str
    description: str


@dataclass(frozen=True)
class Anomaly:
    kind: str
    batch_id: int | None
    partition: int | None
    offset: int | None
    seq: int | None
    expected_count: int
    observed_count: int
    row: dict[str, Any]
    offset_range: dict[str, list[int]] | None = None
    fault: FaultRef | None = None


@dataclass
class CheckResult:
    valid: bool | Literal["unknown"]
    anomalies: list[Anomaly] = field(default_factory=list)
    expected_rows: int = 0
    observed_rows: int = 0
    error: str | None = None

    @property
    def verdict(self) -> Verdict:
        if self.valid == "unknown":
            return "unknown"
        return "exactly-once" if self.valid else "violated"

    def counts(self) -> dict[str, int]:
        """Number of anomalies per kind (rows, with multiplicity)."""
        c: Counter[str] = Counter()
        for a in self.anomalies:
            c[a.kind] += abs(a.observed_count - a.expected_count) if a.kind in ("lost", "duplicate") else 1
        return dict(c)


def _norm(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def _key(row: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, _norm(v)) for k, v in row.items()))


class _BatchIndex:
    def __init__(self, batches: Sequence[BatchSpan]) -> None:
        self.batches = sorted(batches, key=lambda b: b.batch_id)
        self.ends: dict[int, list[tuple[int, int]]] = {}
        for i, b in enumerate(self.batches):
            for p, end in b.end.items():
                if end > b.start.get(p, 0):
                    self.ends.setdefault(p, []).append((end, i))
        for v in self.ends.values():
            v.sort()

    def locate(self, partition: int | None, offset: int | None) -> BatchSpan | None:
        if partition is None or offset is None or partition not in self.ends:
            return None
        ends = self.ends[partition]
        i = bisect.bisect_right(ends, (offset, len(self.batches)))
        if i < len(ends):
            b = self.batches[ends[i][1]]
            if b.start.get(partition, 0) <= offset < b.end[partition]:
                return b
        return None


def check_exactly_once(
    expected: Iterable[Mapping[str, Any]],
    observed: Iterable[Mapping[str, Any]],
    *,
    batches: Sequence[BatchSpan] = (),
    faults: Sequence[FaultRef] = (),
    identity: Sequence[str] = ("partition", "offset", "seq"),
) -> CheckResult:
    """Compare ``observed`` with ``expected`` as multisets of rows."""
    try:
        return _check(list(expected), list(observed), batches, faults, tuple(identity))
    except Exception as exc:
        return CheckResult("unknown", error=f"checker crashed: {exc!r}\n{traceback.format_exc()}")


def _check(
    expected: list[Mapping[str, Any]],
    observed: list[Mapping[str, Any]],
    batches: Sequence[BatchSpan],
    faults: Sequence[FaultRef],
    identity: tuple[str, ...],
) -> CheckResult:
    exp, obs = Counter(map(_key, expected)), Counter(map(_key, observed))
    exp_ids = {tuple(dict(k).get(c) for c in identity) for k in exp}
    index = _BatchIndex(batches)
    anomalies = []
    for key in sorted(set(exp) | set(obs), key=repr):
        e, o = exp.get(key, 0), obs.get(key, 0)
        if e == o:
            continue
        row = dict(key)
        if o < e:
            kind = "lost"
        elif e > 0:
            kind = "duplicate"
        else:
            ident = tuple(row.get(c) for c in identity)
            kind = "replay-divergent" if ident in exp_ids else "phantom"
        part, off, seq = row.get("partition"), row.get("offset"), row.get("seq")
        batch = index.locate(part, off)
        anomalies.append(
            Anomaly(
                kind=kind,
                batch_id=batch.batch_id if batch else None,
                partition=part,
                offset=off,
                seq=seq,
                expected_count=e,
                observed_count=o,
                row=row,
                offset_range={str(p): [batch.start.get(p, 0), batch.end[p]] for p in sorted(batch.end)}
                if batch
                else None,
                fault=_preceding_fault(faults, batch.batch_id if batch else None),
            )
        )
    anomalies.sort(key=lambda a: (KINDS.index(a.kind), a.batch_id or -1, a.partition or 0, a.offset or 0, a.seq or 0))
    return CheckResult(not anomalies, anomalies, sum(exp.values()), sum(obs.values()))


def _preceding_fault(faults: Sequence[FaultRef], batch_id: int | None) -> FaultRef | None:
    if batch_id is None:
        return None
    before = [f for f in faults if f.batch_id <= batch_id]
    return max(before, key=lambda f: (f.batch_id, f.history_index)) if before else None
