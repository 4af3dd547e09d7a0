"""Fault plans as data: *where* (a named crash point), *when* (batch,
partition, task attempt, after N rows, seeded probability), *how* (the
action) and *how often* (``times``).

A :class:`FaultPlan` round-trips through JSON and is validated on load, so a
bad plan is refused before Spark starts with a message naming the rule and
the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from fault_injectors import points, registry
from fault_injectors.actions import DEFAULT
from fault_injectors.plugins import PluginError
from harness.errors import UsageError

#: Named crash points of the micro-batch protocol, in protocol order, and how precisely each is hit
#: (:mod:`fault_injectors.points` defines them).
CRASH_POINTS: dict[str, str] = points.family("protocol")

#: Every crash point, as a tuple in the protocol order of :data:`CRASH_POINTS`: the ``kill_points`` of the
#: scenarios that reach them all. The order matters: ``build_schedule`` shuffles and the Hypothesis strategies
#: draw from a scenario's ``kill_points`` by position, and the crash-point campaigns put point *i* in batch *i*,
#: so reordering :data:`CRASH_POINTS` changes which schedules a seed generates.
ALL_CRASH_POINTS: tuple[str, ...] = tuple(CRASH_POINTS)

#: The crash point inside the user's own sink code: just after the ``step``-th call from the user's
#: frames into code outside them returns (:mod:`fault_injectors.steps`). It is not in
#: :data:`ALL_CRASH_POINTS`: a step fault needs a step number from a census, which seeded ``--kills`` lack.
STEP_POINT = points.STEP.name
STEP_POINTS: dict[str, str] = points.family("step")
#: A timed kill: ``after_ms`` milliseconds after batch N's ``offsets/N`` is written, for what cannot be traced
#: (a JVM-side sink, a Scala ``foreach`` writer, a MERGE Spark executes). Fired by the checkpoint watcher in the
#: driver; not in :data:`ALL_CRASH_POINTS`, and not deterministic: a replay lands a few ms elsewhere.
TIMED_POINT = points.TIMED.name
TIMED_POINTS: dict[str, str] = points.family("timed")
#: Moments of Spark's state maintenance, seen by the checkpoint watcher in the driver (a SIGKILL only: there is no
#: code of the harness's to raise in). Not in :data:`ALL_CRASH_POINTS`: they exist only where the query keeps state
#: and its maintenance runs (``spark.sql.streaming.stateStore.maintenanceInterval``), so an explicit ``--kill`` or a
#: fault plan names them.
SNAPSHOT_POINT = points.SNAPSHOT.name
PURGE_POINT = points.PURGE.name
BOUNDARY_POINTS: dict[str, str] = points.family("boundary")
#: Batch boundaries of a DStream application (:mod:`fault_injectors.dstream`): batch N is the batch that reads round
#: N's files (one batch per round, by the files' modification times). Exact, fired in the driver; not in
#: :data:`ALL_CRASH_POINTS`, since they exist only in a DStream scenario.
DSTREAM_POINTS: dict[str, str] = points.family("dstream")
#: The wrapped sink functions whose steps are counted, each on its own (steps restart at 1 in each call).
WRAPPERS: dict[str, str] = {
    "foreach_batch": "a foreachBatch function (driver)",
    "write": "DataSourceStreamWriter.write() (one call per task, on an executor)",
    "commit": "DataSourceStreamWriter.commit(messages, batchId) (driver side)",
    "abort": "DataSourceStreamWriter.abort(messages, batchId) (driver side)",
    "foreach_rdd": "a DStream foreachRDD function (driver), including saveAsTextFiles",
    "foreach_open": "a foreach writer's open(partition_id, epoch_id) (one call per task, on an executor)",
    "foreach_process": "a foreach writer's process(row), or the function given to foreach (one call per row)",
    "foreach_close": "a foreach writer's close(error) (one call per task)",
}
#: The wrapped functions Spark calls in the driver's own Python process: a ``kill_python`` there kills the code
#: under test with its process, as a whole driver's death would, while a hosted JVM lives on.
DRIVER_PYTHON_WRAPPERS = ("foreach_batch",)


class FaultPlanError(UsageError, ValueError):
    """A fault plan (file or rule) is malformed; the message names the field."""


def _check_int(where: str, name: str, value: Any, *, optional: bool = True, minimum: int = 0) -> None:
    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise FaultPlanError(f"{where}: field '{name}' must be an integer >= {minimum}{' or null' if optional else ''}")


@dataclass(frozen=True)
class FaultRule:
    """Fire ``action`` when ``point`` is reached and every set condition holds.

    ``batch``/``partition``/``attempt`` (task attempt number) of ``None`` match
    any; ``after_rows`` applies to ``sink.write.mid``; ``probability`` draws a
    deterministic, seeded decision per occurrence; ``times`` is how often the
    rule may fire in a run (``None``: every time it matches).
    """

    id: str
    point: str
    batch: int | None = None
    partition: int | None = None
    after_rows: int | None = None
    attempt: int | None = None
    probability: float | None = None
    action: str = DEFAULT
    times: int | None = 1
    step: int | None = None
    wrapper: str | None = None
    after_ms: int | None = None

    @property
    def timed(self) -> bool:
        """Whether this is a timed kill (:data:`TIMED_POINT`): where it lands is measured, not exact."""
        return self.point == TIMED_POINT

    def __post_init__(self) -> None:
        if not self.id or not isinstance(self.id, str) or "/" in self.id:
            raise FaultPlanError("fault rule: field 'id' must be a non-empty string without '/'")
        where = f"fault rule {self.id!r}"
        known = (CRASH_POINTS, STEP_POINTS, TIMED_POINTS, BOUNDARY_POINTS, DSTREAM_POINTS)
        if not any(self.point in points for points in known):
            raise FaultPlanError(
                f"{where}: field 'point' is {self.point!r}; known crash points: "
                f"{', '.join(p for points in known for p in points)}"
            )
        try:
            watcher_kill = registry.watcher_kill(self.action)
        except (registry.UnknownActionError, PluginError) as exc:  # a broken plugin: the plan cannot be checked
            raise FaultPlanError(f"{where}: field 'action': {exc}") from None
        for name in ("batch", "partition", "after_rows", "attempt"):
            _check_int(where, name, getattr(self, name))
        _check_int(where, "times", self.times, minimum=1)
        _check_int(where, "step", self.step, optional=self.point != STEP_POINT, minimum=1)
        if self.point != STEP_POINT and (self.step is not None or self.wrapper is not None):
            raise FaultPlanError(f"{where}: fields 'step' and 'wrapper' belong to point {STEP_POINT!r} only")
        _check_int(where, "after_ms", self.after_ms, optional=not self.timed)
        if self.timed or self.point in BOUNDARY_POINTS:  # fired by the checkpoint watcher, for the whole query
            what = f"a timed kill ({TIMED_POINT})" if self.timed else f"{self.point} (the whole query)"
            for name in ("partition", "after_rows", "attempt", "probability"):
                if getattr(self, name) is not None:
                    raise FaultPlanError(f"{where}: field {name!r} does not apply to {what}")
        if self.point in BOUNDARY_POINTS:
            if not watcher_kill:
                raise FaultPlanError(
                    f"{where}: {self.point} is seen by the checkpoint watcher, which can only take the driver "
                    f"down (action {DEFAULT}, or a plugin's that kills the driver from the watcher), not {self.action}"
                )
            if self.batch is None:
                raise FaultPlanError(f"{where}: {self.point} needs a batch (field 'batch')")
            if self.times != 1:
                raise FaultPlanError(f"{where}: {self.point} fires once (field 'times' must be 1)")
        if self.timed:
            if self.batch is None:
                raise FaultPlanError(f"{where}: a timed kill ({TIMED_POINT}) needs field 'batch'")
            if not watcher_kill or self.times != 1:
                raise FaultPlanError(
                    f"{where}: a timed kill ({TIMED_POINT}) fires once with action {DEFAULT!r} or a plugin's that "
                    "kills the driver from the watcher (the checkpoint watcher that fires it can only kill)"
                )
        elif self.after_ms is not None:
            raise FaultPlanError(f"{where}: field 'after_ms' belongs to point {TIMED_POINT!r} only")
        if self.wrapper is not None and self.wrapper not in WRAPPERS:
            raise FaultPlanError(f"{where}: field 'wrapper' is {self.wrapper!r}; known: {', '.join(WRAPPERS)}")
        if self.probability is not None and (
            not isinstance(self.probability, int | float) or not 0.0 < float(self.probability) <= 1.0
        ):
            raise FaultPlanError(f"{where}: field 'probability' must be a number in (0, 1] or null")

    def describe(self) -> str:
        """Human description, e.g. ``kill at after_offsets_logged of batch 3``."""
        verb = registry.action(self.action).verb
        batch = "any" if self.batch is None else self.batch
        if self.point == STEP_POINT:
            text = f"{verb} after step {self.step} of batch {batch}"
            if self.wrapper is not None:
                text += f" in {self.wrapper}"
        elif self.timed:
            return f"{verb} {self.after_ms} ms into batch {batch} (timed, not deterministic)"
        else:
            text = f"{verb} at {self.point} of batch {batch}"
        for name, label in (("partition", "partition"), ("attempt", "attempt"), ("after_rows", "after rows")):
            value = getattr(self, name)
            if value is not None:
                text += f", {label} {value}"
        if self.probability is not None:
            text += f", p={self.probability}"
        if self.times != 1:
            text += ", every time" if self.times is None else f", up to {self.times} times"
        return text

    @property
    def default_action(self) -> bool:
        """Whether the rule takes the default action (``kill_process_group``), which ``--kill`` omits."""
        return self.action == DEFAULT

    def why_unfired(self) -> str:
        """What may have kept this rule from firing in a run, and what to do (``""`` when nothing specific)."""
        if self.timed:
            return (
                f": no query was running {self.after_ms} ms after offsets/{self.batch} was written (its run caught "
                f"up and stopped sooner, or batch {self.batch} re-ran from an existing offsets/{self.batch} after a "
                "restart); plan a smaller MS"
            )
        if self.point == STEP_POINT:
            return f": batch {self.batch} took fewer than {self.step} steps here (see `python -m harness census`)"
        if self.point in BOUNDARY_POINTS:
            what = "wrote no full copy of that version" if self.point == SNAPSHOT_POINT else "purged nothing after it"
            return (
                f": Spark's state maintenance {what} while the query ran (it runs every "
                "spark.sql.streaming.stateStore.maintenanceInterval, 60 s by default; purges start after "
                "spark.sql.streaming.minBatchesToRetain batches, 100 by default): set them lower in the run's confs"
            )
        return ""

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> FaultRule:
        if not isinstance(raw, Mapping):
            raise FaultPlanError(f"fault rule: every rule must be a JSON object, got {raw!r}")
        known = [f.name for f in fields(cls)]
        rid = raw.get("id", "?")
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise FaultPlanError(f"fault rule {rid!r}: unknown field(s) {unknown}; known: {known}")
        missing = sorted({"id", "point"} - set(raw))
        if missing:
            raise FaultPlanError(f"fault rule {rid!r}: missing field(s) {missing}")
        return cls(**dict(raw))


@dataclass(frozen=True)
class FaultPlan:
    """An ordered set of fault rules with unique ids; ``seed`` drives ``probability``.
    ``census``: the wrapped sink functions record every call's steps (:mod:`fault_injectors.steps`)."""

    rules: tuple[FaultRule, ...] = field(default_factory=tuple)
    seed: int = 0
    census: bool = False

    def __post_init__(self) -> None:
        ids = [r.id for r in self.rules]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise FaultPlanError(f"fault plan: duplicate rule id(s) {dupes}")

    def to_json(self) -> str:
        return json.dumps(
            {"seed": self.seed, "census": self.census, "rules": [asdict(r) for r in self.rules]}, indent=2
        )

    @classmethod
    def from_json(cls, text: str, *, source: str = "fault plan") -> FaultPlan:
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FaultPlanError(f"{source}: not valid JSON ({exc})") from exc
        if not isinstance(raw, dict) or not isinstance(raw.get("rules"), list):
            raise FaultPlanError(f"{source}: expected an object with a list field 'rules'")
        extra = sorted(set(raw) - {"rules", "seed", "census"})
        if extra:
            raise FaultPlanError(f"{source}: unknown top-level field(s) {extra}; known: ['census', 'rules', 'seed']")
        seed = raw.get("seed", 0)
        if not isinstance(seed, int):
            raise FaultPlanError(f"{source}: field 'seed' must be an integer")
        census = raw.get("census", False)
        if not isinstance(census, bool):
            raise FaultPlanError(f"{source}: field 'census' must be true or false")
        try:
            return cls(tuple(FaultRule.from_dict(r) for r in raw["rules"]), seed, census)
        except FaultPlanError as exc:
            raise FaultPlanError(f"{source}: {exc}") from exc
        except TypeError as exc:
            raise FaultPlanError(f"{source}: malformed rule ({exc})") from exc

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
