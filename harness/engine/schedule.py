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
from typing import Any

from fault_injectors.nemesis import NEMESES
from fault_injectors.plan import FaultPlan, FaultRule
from harness.engine.spec import STATE_STORES, RunSpec
from scenarios.admission import Offsets, plan_batches
from scenarios.base import Scenario
from scenarios.sources import source_nemeses


@dataclass(frozen=True)
class Op:
    """One step: ``add_data`` (``rows`` offset units per partition), ``run``
    (until caught up), ``nemesis`` (damage the checkpoint, or the source's
    input, with the action ``name`` while no query runs), ``heal`` (nothing
    new is injected after this), ``check``."""

    kind: str
    rows: dict[int, int] = field(default_factory=dict)
    name: str = ""

    def describe(self) -> str:
        if self.kind == "add_data":
            return "add data " + ", ".join(f"p{p}+{n}" for p, n in sorted(self.rows.items()))
        if self.kind == "nemesis":
            what = "checkpoint" if self.name in NEMESES else "source"
            return f"{what} nemesis {self.name} (no query running)"
        return {"run": "run until caught up", "heal": "heal", "check": "check"}.get(self.kind, self.kind)


@dataclass(frozen=True)
class Schedule:
    ops: tuple[Op, ...]
    plan: FaultPlan
    #: Predicted ``(start, end)`` offsets per batch id, fault-free.
    predicted_batches: tuple[tuple[Offsets, Offsets], ...]

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
        ops += [Op("add_data", rows), Op("run")]
    known, offered = known_nemeses(scenario), source_nemeses(scenario.source)
    unknown = [n for n in spec.nemesis if n not in known]
    if unknown:
        raise ValueError(f"unknown nemesis {unknown[0]!r} for scenario {scenario.name}; known: {', '.join(known)}")
    # A source nemesis acts on the last round's input before the query reads it; a checkpoint one after the rounds.
    last_run = len(ops) - 1
    ops[last_run:last_run] = [Op("nemesis", name=name) for name in spec.nemesis if name in offered]
    ops += [Op("nemesis", name=name) for name in spec.nemesis if name not in offered]
    ops += [Op("heal"), Op("run"), Op("check")]

    rules: list[FaultRule] = []
    if spec.kills:
        if spec.kills > len(predicted):
            raise ValueError(
                f"{spec.kills} kills need as many batches but the schedule has {len(predicted)}; "
                "pass more --rounds or fewer --kills"
            )
        points = list(scenario.kill_points)
        rng.shuffle(points)
        for i, batch in enumerate(sorted(rng.sample(range(len(predicted)), spec.kills))):
            point = points[i % len(points)]
            partition = after_rows = None
            if point == "sink.write.mid":
                start, end = predicted[batch]
                busy = [p for p in parts if end[p] > start[p]]
                partition = rng.choice(busy)
                after_rows = (end[partition] - start[partition]) * scenario.rows_per_offset // 2
            rules.append(FaultRule(f"k{i + 1}", point, batch, partition, after_rows))
    rules += spec.extra_faults
    return Schedule(tuple(ops), FaultPlan(tuple(rules), seed=spec.seed, census=spec.census), tuple(predicted))


def known_nemeses(scenario: Scenario) -> list[str]:
    """The nemesis actions a run of ``scenario`` may name: the checkpoint's (:data:`fault_injectors.nemesis.NEMESES`)
    and its source's (:func:`scenarios.sources.source_nemeses`)."""
    return [*NEMESES, *source_nemeses(scenario.source)]


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
        if point == "sink.write.mid":
            start, end = batches[i]
            partition = max(end, key=lambda p: end[p] - start[p])
            after = (end[partition] - start[partition]) * rows_per_offset // 2
        how: dict[str, Any] = {} if action is None else {"action": action(point)}
        rules.append(FaultRule(rule_id.format(n=i + 1, point=point), point, i, partition, after, **how))
    return rules
