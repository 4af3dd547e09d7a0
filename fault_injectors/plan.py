"""Fault plans as data: which crash fires where, at which batch.

A :class:`FaultPlan` is a tuple of :class:`KillRule`; it round-trips through
JSON and is validated on load, so a bad plan is refused before Spark starts
with a message naming the rule and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: Named crash points of the micro-batch protocol and how precisely each is hit.
CRASH_POINTS: dict[str, str] = {
    "after_offsets_logged": (
        "offsets/N is on disk, nothing of batch N executed yet (fired from the source's "
        "partitions(), which Spark calls right after writing offsets/N; exact)"
    ),
    "sink.write.mid": (
        "a task of batch N has handed `after_rows` rows of one partition to the sink and is "
        "killed mid-write (fired from the source's read() on the executor; exact per task)"
    ),
    "sink.commit.after": (
        "the sink has committed batch N but Spark's commits/N is not written yet "
        "(fired by the foreachBatch wrapper after the user function returns; exact)"
    ),
    "after_commit_logged": (
        "commits/N is on disk (fired from the source's next latestOffset() call, i.e. at the "
        "next trigger or the next query start; exact with respect to the commit log)"
    ),
}

ACTIONS = ("kill_process_group",)


class FaultPlanError(ValueError):
    """A fault plan (file or rule) is malformed; the message names the field."""


@dataclass(frozen=True)
class KillRule:
    """Kill the driver's whole process group with SIGKILL when ``point`` is reached
    in batch ``batch`` (optionally only in source partition ``partition``, after
    ``after_rows`` rows). Fires at most once per run."""

    id: str
    point: str
    batch: int
    partition: int | None = None
    after_rows: int | None = None
    action: str = "kill_process_group"

    def __post_init__(self) -> None:
        where = f"fault rule {self.id!r}"
        if not self.id or not isinstance(self.id, str):
            raise FaultPlanError("fault rule: field 'id' must be a non-empty string")
        if self.point not in CRASH_POINTS:
            raise FaultPlanError(
                f"{where}: field 'point' is {self.point!r}; known crash points: {', '.join(CRASH_POINTS)}"
            )
        if not isinstance(self.batch, int) or self.batch < 0:
            raise FaultPlanError(f"{where}: field 'batch' must be an integer >= 0, got {self.batch!r}")
        if self.partition is not None and (not isinstance(self.partition, int) or self.partition < 0):
            raise FaultPlanError(f"{where}: field 'partition' must be an integer >= 0 or null")
        if self.after_rows is not None and (not isinstance(self.after_rows, int) or self.after_rows < 0):
            raise FaultPlanError(f"{where}: field 'after_rows' must be an integer >= 0 or null")
        if self.action not in ACTIONS:
            raise FaultPlanError(f"{where}: field 'action' is {self.action!r}; known: {', '.join(ACTIONS)}")

    def describe(self) -> str:
        """Human description, e.g. ``kill at after_offsets_logged of batch 3``."""
        extra = ""
        if self.partition is not None:
            extra += f", partition {self.partition}"
        if self.after_rows is not None:
            extra += f", after {self.after_rows} rows"
        return f"kill at {self.point} of batch {self.batch}{extra}"

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> KillRule:
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(raw) - known
        rid = raw.get("id", "?")
        if unknown:
            raise FaultPlanError(f"fault rule {rid!r}: unknown field(s) {sorted(unknown)}; known: {sorted(known)}")
        missing = {"id", "point", "batch"} - set(raw)
        if missing:
            raise FaultPlanError(f"fault rule {rid!r}: missing field(s) {sorted(missing)}")
        return cls(**dict(raw))


@dataclass(frozen=True)
class FaultPlan:
    """An ordered set of fault rules with unique ids."""

    rules: tuple[KillRule, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        ids = [r.id for r in self.rules]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise FaultPlanError(f"fault plan: duplicate rule id(s) {dupes}")

    def to_json(self) -> str:
        return json.dumps({"rules": [asdict(r) for r in self.rules]}, indent=2)

    @classmethod
    def from_json(cls, text: str, *, source: str = "fault plan") -> FaultPlan:
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FaultPlanError(f"{source}: not valid JSON ({exc})") from exc
        if not isinstance(raw, dict) or not isinstance(raw.get("rules"), list):
            raise FaultPlanError(f"{source}: expected an object with a list field 'rules'")
        try:
            return cls(tuple(KillRule.from_dict(r) for r in raw["rules"]))
        except FaultPlanError as exc:
            raise FaultPlanError(f"{source}: {exc}") from exc
        except TypeError as exc:
            raise FaultPlanError(f"{source}: every rule must be an object ({exc})") from exc

    @classmethod
    def load(cls, path: str | Path) -> FaultPlan:
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as exc:
            raise FaultPlanError(f"fault plan {p}: cannot read ({exc.strerror})") from exc
        return cls.from_json(text, source=f"fault plan {p}")

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json())
