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
import dataclasses
import math
import traceback
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

Verdict = Literal["exactly-once", "violated", "unknown"]
#: Anomaly kinds, in report order. ``wrong-value``: a group (identity columns that
#: are not row provenance, e.g. window + key of an aggregate) is visible with
#: other values than the oracle's (e.g. a replayed batch counted twice).
#: ``uncommitted-visible``: a visible row of a batch the checkpoint never
#: committed. ``offset-regression``: the checkpoint's offsets move backwards. ``state-mismatch``: after the run,
#: Spark's state holds a row the scenario's expected final state does not, or lacks one it does.
KINDS = (
    "lost",
    "duplicate",
    "wrong-value",
    "phantom",
    "replay-divergent",
    "uncommitted-visible",
    "offset-regression",
    "state-mismatch",
)
PROVENANCE = ("partition", "offset", "seq")


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
    #: Per partition ``[start, end)`` of the batch; for a source without provenance, ``{"source": [start, end]}``
    #: with the source's own offsets as JSON text.
    offset_range: dict[str, list[Any]] | None = None
    fault: FaultRef | None = None
    #: For ``wrong-value``: the row readers see instead of ``row`` (the expected one).
    observed_row: dict[str, Any] | None = None
    #: For anomalies found in the checkpoint: what the inspector said.
    detail: str | None = None
    #: For a versioned table sink (Delta): the table versions that hold the row and carry its batch.
    sink_where: str | None = None
    #: For an upgrade run: on which side of the deploy the anomaly lies (:mod:`harness.verdict.deploy_marks`).
    deploy: str | None = None


@dataclass(frozen=True)
class AllowedLoss:
    """Records ``[start, end)`` of source partition ``partition`` (named by ``where``, e.g. ``topic T``) that the
    query may skip because ``setting`` (e.g. ``failOnDataLoss=false``) allows it: deleted before it read them."""

    partition: int
    start: int
    end: int
    where: str
    setting: str

    def describe(self) -> str:
        return f"{self.where} partition {self.partition} offsets [{self.start}, {self.end})".strip()


@dataclass(frozen=True)
class AllowedReplay:
    """Records ``[0, end)`` of source partition ``partition``, which the query had planned to read before
    ``setting`` (e.g. a fresh checkpoint) made it read its source again from the start: each may be delivered
    once more."""

    partition: int
    end: int
    setting: str

    def describe(self) -> str:
        return f"partition {self.partition} offsets [0, {self.end})"


@dataclass
class CheckResult:
    valid: bool | Literal["unknown"]
    anomalies: list[Anomaly] = field(default_factory=list)
    expected_rows: int = 0
    observed_rows: int = 0
    error: str | None = None
    #: ``lost`` rows the run's configuration allows (:func:`harness.verdict.allowed.allow_losses`), ``duplicate``
    #: rows a fresh start of the source allows (:func:`harness.verdict.allowed.allow_replays`): not a violation.
    allowed: list[Anomaly] = field(default_factory=list)
    #: The allowances those rows fall under.
    allowed_losses: list[AllowedLoss] = field(default_factory=list)
    #: The replays that allow ``duplicate`` rows in ``allowed`` (:func:`harness.verdict.allowed.allow_replays`).
    allowed_replays: list[AllowedReplay] = field(default_factory=list)

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


#: What a float NaN counts as: every NaN is one value here (Arrow groups them so too), not a new one each.
NAN = "NaN"


def _norm(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and math.isnan(value):
        return NAN
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
    identity: Sequence[str] = PROVENANCE,
    checkpoint_anomalies: Sequence[Anomaly] = (),
    totals: tuple[int, int] | None = None,
) -> CheckResult:
    """Compare ``observed`` with ``expected`` as multisets of rows.

    ``checkpoint_anomalies`` (e.g. ``offset-regression`` found by the
    inspector) are added as they are; any anomaly makes the run violated.
    ``totals`` (expected, observed) are the row counts of the whole input when
    ``expected`` and ``observed`` hold only the rows of the identities that
    differ (:func:`harness.verdict.multiset.narrow`)."""
    try:
        result = _check(list(expected), list(observed), batches, faults, tuple(identity))
        if totals is not None:
            result.expected_rows, result.observed_rows = totals
        if checkpoint_anomalies:
            result.anomalies = [*result.anomalies, *checkpoint_anomalies]
            result.valid = False
        return result
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
    grouped = tuple(identity) != PROVENANCE
    anomalies: list[Anomaly] = []
    # Groups (non-provenance identity): a missing expected row and an extra
    # observed row with the same identity are one wrong value, not two anomalies.
    extra_by_id: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    if grouped:
        for key in obs:
            if obs[key] > exp.get(key, 0) and exp.get(key, 0) == 0:
                row = dict(key)
                extra_by_id.setdefault(tuple(row.get(c) for c in identity), []).append(row)
    paired: set[tuple[tuple[str, Any], ...]] = set()
    # Missing rows first, so that extras of the same group are paired before being judged.
    for key in sorted(set(exp) | set(obs), key=lambda k: (obs.get(k, 0) >= exp.get(k, 0), repr(k))):
        e, o = exp.get(key, 0), obs.get(key, 0)
        if e == o or key in paired:
            continue
        row = dict(key)
        ident = tuple(row.get(c) for c in identity)
        observed_row = None
        if o < e and grouped and extra_by_id.get(ident):
            kind, observed_row = "wrong-value", extra_by_id[ident].pop(0)
            paired.add(_key(observed_row))
        elif o < e:
            kind = "lost"
        elif e > 0:
            kind = "duplicate"
        else:
            kind = "replay-divergent" if ident in exp_ids and not grouped else "phantom"
        part, off, seq = row.get("partition"), row.get("offset"), row.get("seq")
        batch = index.locate(part, off)
        fault = (
            _preceding_fault(faults, batch.batch_id)
            if batch
            else (max(faults, key=lambda f: f.history_index) if faults and grouped else None)
        )
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
                fault=fault,
                observed_row=observed_row,
            )
        )
    for a in list(anomalies):  # rows readers see from a batch the checkpoint never committed
        if a.kind in ("duplicate", "phantom") and a.batch_id is not None:
            span = next(b for b in index.batches if b.batch_id == a.batch_id)
            if not span.committed:
                anomalies.append(dataclasses.replace(a, kind="uncommitted-visible"))
    anomalies.sort(key=lambda a: (KINDS.index(a.kind), a.batch_id or -1, a.partition or 0, a.offset or 0, a.seq or 0))
    return CheckResult(not anomalies, anomalies, sum(exp.values()), sum(obs.values()))


def _preceding_fault(faults: Sequence[FaultRef], batch_id: int | None) -> FaultRef | None:
    if batch_id is None:
        return None
    before = [f for f in faults if f.batch_id <= batch_id]
    return max(before, key=lambda f: (f.batch_id, f.history_index)) if before else None
