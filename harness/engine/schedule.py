"""Schedules: ``(spec, scenario) -> ops + fault plan``, pure and printable.

A schedule is ``rounds`` repetitions of *add data, run until caught up*,
then a final *heal, run to completion, check*. Batch boundaries are predicted
with the same admission function the source uses, so seeded kills name batch
ids that will exist. All randomness comes from ``random.Random(spec.seed)``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from fault_injectors.nemesis import checkpoint_nemeses
from fault_injectors.plan import FaultPlan, FaultRule
from fault_injectors.points import takes_rows
from fault_injectors.registry import kills_driver
from harness.engine.deploy import NO_DEPLOY_AFTER
from harness.engine.epochs import EPOCHS_PER_ROUND
from harness.engine.spec import STATE_STORES, RunSpec, parse_deploy
from harness.engine.trigger import run_trigger, sure_batches
from harness.spark.connect import is_connect
from scenarios.admission import Offsets, plan_batches
from scenarios.base import Scenario
from scenarios.dstream import DStreamScenario
from scenarios.sources import source_nemeses


class OpKind(StrEnum):
    """What one step of a schedule does (the runner plays each with a handler of its own)."""

    #: Add ``rows`` offset units per partition to the source.
    ADD_DATA = "add_data"
    #: Run the query until it has caught up (a round's job, under a scheduled trigger).
    RUN = "run"
    #: Damage the checkpoint, or the source's input, with the action ``name`` while no query runs.
    NEMESIS = "nemesis"
    #: An upgrade run's next version ``name`` takes over the checkpoint while no query runs.
    DEPLOY = "deploy"
    #: Nothing new is injected after this.
    HEAL = "heal"
    #: Read the sink back and judge it.
    CHECK = "check"


@dataclass(frozen=True)
class Op:
    """One step of a schedule: its ``kind`` (:class:`OpKind`), the ``rows`` an ``add_data`` adds (offset units
    per partition), the ``name`` of a nemesis or of the version a deploy brings."""

    kind: OpKind
    rows: dict[int, int] = field(default_factory=dict)
    name: str = ""

    def describe(self) -> str:
        if self.kind is OpKind.ADD_DATA:
            return "add data " + ", ".join(f"p{p}+{n}" for p, n in sorted(self.rows.items()))
        if self.kind is OpKind.NEMESIS:
            what = "checkpoint" if self.name in checkpoint_nemeses() else "source"
            return f"{what} nemesis {self.name} (no query running)"
        if self.kind is OpKind.DEPLOY:
            return f"deploy {self.name} over the checkpoint (graceful: no query running)"
        return {OpKind.RUN: "run until caught up", OpKind.HEAL: "heal", OpKind.CHECK: "check"}[self.kind]


@dataclass(frozen=True)
class Schedule:
    ops: tuple[Op, ...]
    plan: FaultPlan
    #: Predicted ``(start, end)`` offsets per batch id, fault-free.
    predicted_batches: tuple[tuple[Offsets, Offsets], ...]

    @property
    def driver_kills(self) -> int:
        """How many times planned faults take the driver's processes down (each needs a new driver); a rule that
        fires without limit (``times=None``) counts twice."""
        return sum((r.times or 2) for r in self.plan.rules if kills_driver(r.action))

    def driver_kills_left(self, fired: list[str | None]) -> bool:
        """Whether a planned driver kill may still fire, given the ids of what fired so far (the runner's nemeses,
        deploys and upgrades among them, which are not the plan's)."""
        planned = {r.id: r.times for r in self.plan.rules if kills_driver(r.action)}
        return any(times is None or fired.count(rule_id) < times for rule_id, times in planned.items())

    def describe(self) -> list[str]:
        lines = [f"{i:>2}. {op.describe()}" for i, op in enumerate(self.ops)]
        lines += [f"    fault {r.id}: {r.describe()}" for r in self.plan.rules]
        return lines


def build_schedule(spec: RunSpec, scenario: Scenario) -> Schedule:
    """The schedule of ``spec`` for ``scenario``; deterministic in ``spec``."""
    rng = random.Random(spec.seed)
    parts = range(scenario.partitions)
    ops: list[Op] = []
    predicted: list[tuple[Offsets, Offsets]] = []
    available: Offsets = {p: 0 for p in parts}
    max_offsets = scenario.batch_limit_for(spec.effective_batch_rows(scenario.max_rows_per_batch))
    volume = spec.volume_offsets(scenario.partitions, scenario.rows_per_offset)
    unknown = [s for s in scenario.state_stores if s not in STATE_STORES]
    if unknown:
        raise ValueError(f"scenario {scenario.name}: state_stores {unknown} are not among {', '.join(STATE_STORES)}")
    if spec.state_store and scenario.state_stores and spec.state_store not in scenario.state_stores:
        raise ValueError(
            f"scenario {scenario.name} runs on the {' or '.join(scenario.state_stores)} state store only "
            f"(got {spec.state_store}); leave the state store out for the scenario's own default"
        )
    if spec.rows is not None and any(len(r) != scenario.partitions for r in spec.rows):
        raise ValueError(f"spec.rows must give {scenario.partitions} amounts per round (one per partition)")
    trigger = run_trigger(spec, scenario)  # ValueError for one the scenario cannot run under
    if is_connect(spec.master) and isinstance(scenario, DStreamScenario):
        raise ValueError(
            f"scenario {scenario.name} is a DStream application, which needs a SparkContext; Spark Connect has none: "
            "run it without --remote"
        )
    if trigger.one_batch:  # one batch a job, read limits ignored
        max_offsets = None
    first_new = 0
    per_round: list[dict[int, int]] = []
    for r in range(spec.effective_rounds):
        lo, hi = scenario.rows_per_round
        if spec.rows is not None:
            rows = dict(enumerate(spec.rows[r]))
        elif volume is not None:
            rows = {p: volume for p in parts}
        else:
            rows = {p: rng.randint(lo, hi) for p in parts}
        start = dict(available)
        available = {p: available[p] + rows[p] for p in parts}
        predicted += plan_batches(start, available, max_offsets)
        per_round.append(rows)
        ops += [Op(OpKind.ADD_DATA, rows), Op(OpKind.RUN)]
        if spec.old_pyspark is not None and r + 1 == spec.old_rounds:
            first_new = len(predicted)  # the older PySpark's batches: no fault fires in them
    known, offered = known_nemeses(scenario), source_nemeses(scenario.source)
    unknown = [n for n in spec.nemesis if n not in known]
    if unknown:
        raise ValueError(f"unknown nemesis {unknown[0]!r} for scenario {scenario.name}; known: {', '.join(known)}")
    # A source nemesis acts on the last round's input before the query reads it; a checkpoint one after the rounds.
    last_run = len(ops) - 1
    ops[last_run:last_run] = [Op(OpKind.NEMESIS, name=name) for name in spec.nemesis if name in offered]
    ops += [Op(OpKind.NEMESIS, name=name) for name in spec.nemesis if name not in offered]
    ops += [Op(OpKind.HEAL), Op(OpKind.RUN), Op(OpKind.CHECK)]
    if spec.upgrade_to is not None:
        _check_upgrade(spec, scenario)
        kind, arg = parse_deploy(spec.deploy or "after-round:1")
        if kind == "after-round":
            runs = [i for i, op in enumerate(ops) if op.kind is OpKind.RUN]
            if not isinstance(arg, int) or arg >= spec.effective_rounds:
                raise ValueError(
                    f"deploy {spec.deploy}: the schedule has {spec.effective_rounds} round(s); a graceful deploy "
                    "goes after round 1..rounds-1, so the new version has data of its own to run"
                )
            ops.insert(runs[arg - 1] + 1, Op(OpKind.DEPLOY, name=spec.upgrade_to))

    rules: list[FaultRule] = []
    # A scheduled job's batches depend on where the previous job was killed: aim only at batch ids every run
    # makes, and not at sink.write.mid (its row count is that of a batch the kills may reshape).
    sure = sure_batches(trigger.kind, per_round, max_offsets, spec.kills) if trigger.scheduled else len(predicted)
    if trigger.epochs:  # epochs come by the clock: every run commits EPOCHS_PER_ROUND a round
        sure = EPOCHS_PER_ROUND * spec.effective_rounds
    if spec.kills:
        if spec.kills > sure - first_new:
            older = f" after the older PySpark's {first_new}" if first_new else ""
            made = f"every {trigger.kind} schedule of these rounds makes {sure}" if trigger.scheduled else ""
            raise ValueError(
                f"{spec.kills} kills need as many batches but {made or f'the schedule has {sure - first_new}'}{older}; "
                "pass more --rounds or fewer --kills"
            )
        points = list(scenario.kill_points)
        if trigger.scheduled and len(points) > 1:
            points = [p for p in points if not takes_rows(p)]
        rng.shuffle(points)
        for i, batch in enumerate(sorted(rng.sample(range(first_new, sure), spec.kills))):
            point = points[i % len(points)]
            partition = after_rows = None
            if takes_rows(point) and trigger.epochs:  # an epoch's rows are the clock's: a few
                after_rows = rng.randint(0, 3)
            elif takes_rows(point):
                start, end = predicted[batch]
                busy = [p for p in parts if end[p] > start[p]]
                partition = rng.choice(busy)
                after_rows = (end[partition] - start[partition]) * scenario.rows_per_offset // 2
            rules.append(FaultRule(f"k{i + 1}", point, batch, partition, after_rows))
    rules += spec.extra_faults
    if spec.old_pyspark is not None:
        _check_old_spark(spec, scenario, rules, first_new)
    if spec.upgrade_to is not None and spec.deploy and spec.deploy.startswith("after-fault:"):
        wanted = spec.deploy.partition(":")[2]
        rule = next((r for r in rules if r.id == wanted), None)
        if rule is not None and rule.point in NO_DEPLOY_AFTER:
            raise ValueError(
                f"deploy {spec.deploy}: fault {wanted} is at {rule.point}, after which the sink may hold the batch "
                "without commits/N; version 2 would replay a batch the sink skips. Deploy after an earlier point"
            )
        if rule is None or not kills_driver(rule.action):
            have = ", ".join(r.id for r in rules if kills_driver(r.action)) or "none"
            raise ValueError(
                f"deploy {spec.deploy}: no fault rule {wanted!r} that kills the driver (kills planned: {have}); "
                "a deploy after a fault needs the driver to die, so the next one starts as the new version"
            )
    return Schedule(tuple(ops), FaultPlan(tuple(rules), seed=spec.seed, census=spec.census), tuple(predicted))


def _check_upgrade(spec: RunSpec, scenario: Scenario) -> None:
    """Refuse an upgrade pair the harness cannot feed as one input (``ValueError``, one line)."""
    from scenarios import get_scenario

    assert spec.upgrade_to is not None
    try:
        new = get_scenario(spec.upgrade_to)
    except KeyError as exc:
        raise ValueError(f"upgrade_to: {exc.args[0]}") from None
    if isinstance(scenario, DStreamScenario) or isinstance(new, DStreamScenario):
        raise ValueError(
            f"upgrade {scenario.name} -> {new.name}: a DStream application is recovered whole from its checkpoint "
            "(getOrCreate restores the old code), so a deploy over it runs no new code; start the new version on a "
            "new checkpoint"
        )
    if spec.nemesis:
        raise ValueError("an upgrade run takes no nemesis: a loud failure after the deploy must be the new version's")
    if not scenario.source.provenance:
        raise ValueError(
            f"scenario {scenario.name}: an upgrade run judges each batch by the version that ran it, through the "
            f"rows' provenance columns; {scenario.source.describe()} adds none"
        )
    if (new.partitions, new.rows_per_offset) != (scenario.partitions, scenario.rows_per_offset):
        raise ValueError(
            f"upgrade {scenario.name} -> {new.name}: both versions read one input, so partitions and rows_per_offset "
            f"must match ({scenario.partitions}/{scenario.rows_per_offset} vs {new.partitions}/{new.rows_per_offset})"
        )


def _check_old_spark(spec: RunSpec, scenario: Scenario, rules: Sequence[FaultRule], first_new: int) -> None:
    """Refuse a Spark upgrade run the older PySpark cannot play (``ValueError``, one line)."""
    from scenarios.sources import FileDirectory

    if not isinstance(scenario.source, FileDirectory):
        raise ValueError(
            f"scenario {scenario.name} reads {scenario.source.describe()}; an older PySpark runs Spark's own file "
            "source only (the replayable source needs pyspark.sql.datasource, 4.0+): use a FileDirectory scenario"
        )
    early = [r.id for r in rules if r.batch is not None and r.batch < first_new]
    if early:
        raise ValueError(
            f"fault(s) {', '.join(early)} aim at batches the older PySpark runs (0..{first_new - 1}), fault-free; "
            f"aim at batch {first_new} or later"
        )
    if spec.nemesis:
        raise ValueError("a Spark upgrade run takes no nemesis: a failure after it must be the upgrade's")


def known_nemeses(scenario: Scenario) -> list[str]:
    """The nemesis actions a run of ``scenario`` may name: the checkpoint's (built-in and plugins':
    :func:`fault_injectors.nemesis.checkpoint_nemeses`)
    and its source's (:func:`scenarios.sources.source_nemeses`)."""
    return [*checkpoint_nemeses(), *source_nemeses(scenario.source)]


def rules_per_point(
    points: Sequence[str],
    batches: Sequence[tuple[Offsets, Offsets]],
    rows_per_offset: int,
    *,
    rule_id: str = "at-{point}",
    action: Callable[[str], str] | None = None,
) -> list[FaultRule]:
    """One fault rule per crash point, ``points[i]`` in batch ``i``, so each
    fault fires in a batch of its own.

    ``batches`` are the predicted ``(start, end)`` offsets per batch id (a
    :class:`Schedule`'s ``predicted_batches``). A ``sink.write.mid`` rule aims at
    the busiest partition of its batch (most offsets; on a tie the first in
    ``end``'s order) and fires after half that partition's rows
    (``offsets * rows_per_offset // 2``); any other rule matches every partition
    and has no ``after_rows``. Only a ``sink.write.mid`` point needs its batch
    predicted (``IndexError`` otherwise); the caller makes enough batches.
    Rule ids are ``rule_id`` formatted with ``n`` (``i + 1``) and ``point``;
    ``action(point)`` gives a rule's action (``None``: :class:`FaultRule`'s
    default, a SIGKILL of the driver's process group).
    """
    rules = []
    for i, point in enumerate(points):
        partition = after = None
        if takes_rows(point):
            start, end = batches[i]
            partition = max(end, key=lambda p: end[p] - start[p])
            after = (end[partition] - start[partition]) * rows_per_offset // 2
        how: dict[str, Any] = {} if action is None else {"action": action(point)}
        rules.append(FaultRule(rule_id.format(n=i + 1, point=point), point, i, partition, after, **how))
    return rules
