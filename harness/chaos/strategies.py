"""Hypothesis strategies that draw whole chaos schedules as ``RunSpec`` values.

A drawn spec fixes everything: the seed (row contents), the data added in each
round, and every fault as a rule with an absolute batch id. Batch boundaries
are predicted with the admission function the source itself uses, so each
fault names a batch that will exist. Given a census of the drawn data
(``steps``), about half the faults are ``sink.step`` faults: a kill or raise
just after step *k* of the sink's own code in a batch, drawn only among the
census's effect boundaries (the distinct kill points). Shrinking goes towards fewer rounds, less
data, fewer faults and soft faults (an injected exception) rather than hard
kills, so a minimal failing schedule is also cheap to replay.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from fault_injectors.actions import KILL, RAISE
from fault_injectors.plan import STEP_POINT, TIMED_POINT, FaultRule
from fault_injectors.points import takes_rows
from fault_injectors.registry import kills_driver, needing, plugin_drawn
from harness.engine.deploy import NO_DEPLOY_AFTER
from harness.engine.epochs import EPOCHS_PER_ROUND
from harness.engine.spec import CHECKPOINT_FORMATS, STATE_STORES, RunSpec
from harness.engine.trigger import EPOCHS, parse_trigger, sure_batches
from harness.inspector.boundaries import compaction_batches
from harness.spark.standalone import is_standalone
from scenarios.admission import plan_batches
from scenarios.base import Scenario
from scenarios.sources import source_nemeses

#: Percent of the faults in a batch with traced sink calls that are ``sink.step`` faults.
STEP_SHARE = 50
#: Percent of the other faults that are timed kills, when a campaign draws them (``timed=True``).
TIMED_SHARE = 25
#: A timed kill lands 0..TIMED_MAX_MS ms after ``offsets/N`` is written.
TIMED_MAX_MS = 1500
#: On a standalone cluster the harness started (``master="standalone:W"``): percentage of soft faults at named
#: points drawn as a ``kill_worker`` or ``kill_master`` instead (shrinking leads away from them, to a raise).
CLUSTER_SHARE = 30
#: For a source whose servers the harness runs (a Kafka topic on the harness's broker: ``fault_actions``):
#: percentage of the faults at named points drawn as an action on the server instead (``kill_broker``).
SERVER_SHARE = 30
#: Percentage of the faults at named points drawn as an installed plugin's action (one that campaigns draw,
#: needs no cluster or server, and, at a point only the checkpoint watcher reaches, may fire from there).
#: Drawn last among the actions, and only when such a plugin is installed: without one, seeds keep their
#: schedules.
PLUGIN_SHARE = 30
#: For a source with nemeses of its own (a Kafka topic: ``age_out_records``, ``add_partitions``): percentage of
#: examples that get one, applied to the last round's input before the query reads it.
SOURCE_NEMESIS_SHARE = 30
#: ``(seed, rows per round, batch rows) -> {batch id: [(wrapper, partition, boundary steps), ...]}``: a census
#: of that data, each call's effect boundaries (step numbers, ascending) as ``harness.chaos.census.StepCalls``.
StepCensus = Callable[
    [int, Sequence[Sequence[int]], int | None], Mapping[int, Sequence[tuple[str, int | None, Sequence[int]]]]
]


@st.composite
def chaos_specs(
    draw: st.DrawFn,
    scenario: Scenario,
    *,
    max_rounds: int = 2,
    max_faults: int = 2,
    hard_kill_ratio: float = 0.25,
    nemesis: Sequence[str] = (),
    master: str = "local[2]",
    seeds: st.SearchStrategy[int] | None = None,
    ref: str | None = None,
    steps: StepCensus | None = None,
    timed: bool = False,
    volume: int | None = None,
    batch_rows: int | None = None,
    triggers: Sequence[str] = (),
    rounds: int | None = None,
) -> RunSpec:
    """A ``RunSpec`` for ``scenario``: 1..``max_rounds`` rounds of data,
    1..``max_faults`` faults (every example exercises a fault) at distinct (batch, point) pairs, each a hard kill
    with probability ``hard_kill_ratio`` (always at the scenario's ``kill_only_points``), and optionally one
    nemesis from ``nemesis``. On a ``standalone:W`` master some soft faults are drawn as ``kill_worker`` or
    ``kill_master`` (:data:`CLUSTER_SHARE`). For a source whose server the harness runs (a Kafka topic), some
    faults at named points are drawn as ``kill_broker`` (:data:`SERVER_SHARE`), and an example may get one of the
    source's own nemeses (:data:`SOURCE_NEMESIS_SHARE`: ``age_out_records``, ``add_partitions``); both shrink
    away (towards a kill of the driver, and no source nemesis). An installed plugin's action that campaigns draw
    replaces some faults at named points (:data:`PLUGIN_SHARE`).
    ``ref`` is how the spec names the scenario (default its name; a user's
    pipeline is named by import path, ``package.module:ATTRIBUTE``).

    ``steps(seed, rows, batch_rows)`` gives, per batch id, each traced sink call of a fault-free run of that data as
    ``(wrapper, partition, boundaries)`` (:class:`harness.chaos.census.CensusCache`): the call's effect boundaries,
    its distinct kill points. With it, a fault in a batch that has steps is a ``sink.step`` fault with probability
    :data:`STEP_SHARE`: a wrapper of the batch (each equally likely), a call of it, then ``k`` among its
    boundaries, so it shrinks towards the first boundary. A batch
    gets at most one step fault: a replayed batch may take fewer steps (a sink that finds its batch id
    recorded returns early).

    ``timed``: a fault that is not a step fault is a timed kill (``batch.time``, 0..:data:`TIMED_MAX_MS` ms after
    ``offsets/N``) with probability :data:`TIMED_SHARE`, at most one per batch. Shrinking moves it towards a
    named crash point (deterministic) and towards 0 ms. Without ``timed`` the draws are the same as before
    timed kills existed, so a seed keeps its schedules.

    ``volume``: the drawn amounts are a shape, scaled by one factor ``k`` so the example adds at least ``volume``
    rows, and a batch may take ``k`` times the scenario's ``max_rows_per_batch`` (``RunSpec.batch_rows``): the
    batches, and so the faults drawn for them, are those of the shape, at ``k`` times the rows.
    ``batch_rows``: the rows a batch may take instead (fewer: more batches for the same data; a long schedule
    past the file sink's log compactions, whose batches are drawn as often as all the others together).

    ``triggers`` (``RunSpec.trigger`` texts): each example runs under one, drawn first and shrunk towards the
    first given; a scheduled one aims faults only at batch ids every such schedule makes, an epoch one at the
    epochs its rounds commit (:func:`fault_batches`). ``rounds``: every example has that many rounds (job runs)
    instead of 1..``max_rounds``. Without either the draws are the same as before they existed."""
    seed = draw(seeds if seeds is not None else st.integers(0, 2**16))
    trigger_text = draw(st.sampled_from(list(triggers))) if triggers else None
    trigger = parse_trigger(trigger_text) if trigger_text else None
    lo, hi = scenario.rows_per_round
    # An upgrade run deploys after a round at the earliest, so the new version gets data of its own.
    if rounds is None:
        rounds = draw(st.integers(2, max(2, max_rounds)) if scenario.upgrade_to else st.integers(1, max_rounds))
    rows = tuple(tuple(draw(st.integers(min(lo, 1), hi)) for _ in range(scenario.partitions)) for _ in range(rounds))
    explicit = batch_rows
    if volume is not None:
        k = max(1, math.ceil(volume / max(1, sum(map(sum, rows)) * scenario.rows_per_offset)))
        rows = tuple(tuple(n * k for n in r) for r in rows)
        batch_rows = scenario.max_rows_per_batch * k
    batch_rows = explicit if explicit is not None else batch_rows
    limit = scenario.batch_limit_for(batch_rows or scenario.max_rows_per_batch)
    if trigger is not None and trigger.one_batch:
        limit = None  # one batch a job, read limits ignored
    available = {p: 0 for p in range(scenario.partitions)}
    predicted = []
    for r in rows:
        start = dict(available)
        available = {p: available[p] + r[p] for p in available}
        predicted += plan_batches(start, available, limit)
    kill_points = list(scenario.kill_points)
    if trigger is not None and not trigger.clocked:
        # Batch ids every run of the trigger makes; no sink.write.mid, whose row count the kills may reshape.
        if trigger.one_batch:  # at most rounds // 2 faults, so rounds - faults job batches hold them all
            max_faults = min(max_faults, len(rows) // 2)
        sure = fault_batches(trigger.kind, rows, limit, max_faults)
        predicted = [({}, {}) for _ in range(sure)] if trigger.epochs else predicted[:sure]
        kill_points = [p for p in kill_points if not takes_rows(p)] or kill_points
    faults: list[FaultRule] = []
    servers = list(getattr(scenario.source, "fault_actions", ()))
    step_calls = steps(seed, rows, batch_rows) if steps is not None and predicted else {}
    if predicted and max_faults > 0:
        n = draw(st.integers(min(1, max_faults), min(max_faults, len(predicted) * len(scenario.kill_points))))
        used: set[tuple[int, str]] = set()
        threshold = round((1.0 - hard_kill_ratio) * 100)
        for i in range(n):
            batch = draw(_batch_ids(len(predicted)))
            calls = [c for c in step_calls.get(batch, ()) if c[2]] if (batch, STEP_POINT) not in used else None
            step = wrapper = None
            if calls and draw(st.integers(0, 99)) < STEP_SHARE:
                point = STEP_POINT
                # A wrapper first, then one of its calls: the one driver-side commit() of a batch, where
                # publishing bugs live, is as likely as all its write() tasks together.
                kind = draw(st.sampled_from(list(dict.fromkeys(c[0] for c in calls))))
                wrapper, partition, points = draw(st.sampled_from([c for c in calls if c[0] == kind]))
                step = draw(st.sampled_from(list(points)))
            elif timed and (batch, TIMED_POINT) not in used and draw(st.integers(0, 99)) >= 100 - TIMED_SHARE:
                point = TIMED_POINT
            else:
                point = draw(st.sampled_from(kill_points))
            if (batch, point) in used:
                continue
            used.add((batch, point))
            hard = draw(st.integers(0, 99)) >= threshold  # drawn for a timed kill too (always hard): see below
            if point == TIMED_POINT:
                # As many draws as a named point's (share, point, hard), so that Hypothesis, which prefers
                # shorter choice sequences, shrinks a timed kill to a named, deterministic crash point.
                faults.append(FaultRule(f"h{i + 1}", point, batch, after_ms=draw(st.integers(0, TIMED_MAX_MS))))
                continue
            # The checkpoint watcher reaches some points for a source without hooks of its own; it cannot raise.
            kill_only = point in scenario.kill_only_points
            soft = not hard and not kill_only
            action = RAISE.name if soft else KILL.name
            cluster = soft and point != STEP_POINT and is_standalone(master)
            if cluster and draw(st.integers(0, 99)) >= 100 - CLUSTER_SHARE:
                action = draw(st.sampled_from(needing("standalone")))
            if servers and point != STEP_POINT and draw(st.integers(0, 99)) >= 100 - SERVER_SHARE:
                action = draw(st.sampled_from(servers))
            plugged = plugin_drawn(watcher=kill_only) if point != STEP_POINT else ()
            if plugged and draw(st.integers(0, 99)) >= 100 - PLUGIN_SHARE:
                action = draw(st.sampled_from(plugged))
            if point == STEP_POINT:
                faults.append(
                    FaultRule(f"h{i + 1}", point, batch, partition, action=action, step=step, wrapper=wrapper)
                )
                continue
            partition = after_rows = None
            if takes_rows(point) and trigger is not None and trigger.epochs:
                after_rows = draw(st.integers(0, 3))
            elif takes_rows(point):
                start, end = predicted[batch]
                busy = [p for p in end if end[p] > start[p]]
                partition = draw(st.sampled_from(busy))
                after_rows = draw(st.integers(0, (end[partition] - start[partition]) * scenario.rows_per_offset))
            faults.append(FaultRule(f"h{i + 1}", point, batch, partition, after_rows, action=action))
    chosen_nemesis: tuple[str, ...] = ()
    # `bool(nemesis)`: in `nemesis and draw(...)` mypy would type the draw by the `and`'s left operand.
    # An upgrade run takes no nemesis: a loud failure after the deploy must be the new version's.
    if bool(nemesis) and not scenario.upgrade_to and draw(st.booleans()):
        chosen_nemesis = (draw(st.sampled_from(list(nemesis))),)
    axes = draw(state_axes(scenario.state_stores)) if scenario.stateful else {}
    offered = [n for n in source_nemeses(scenario.source) if n not in chosen_nemesis and not scenario.upgrade_to]
    if offered and draw(st.integers(0, 99)) >= 100 - SOURCE_NEMESIS_SHARE:  # drawn last: other seeds keep theirs
        chosen_nemesis += (draw(st.sampled_from(offered)),)
    last = len(predicted) - 1
    deploy = draw(deploy_moments(rounds, [f for f in faults if f.batch != last])) if scenario.upgrade_to else None
    return RunSpec(
        ref or scenario.name,
        seed,
        kills=0,
        upgrade_to=scenario.upgrade_to,
        deploy=deploy,
        rows=rows,
        batch_rows=batch_rows,
        extra_faults=tuple(faults),
        **axes,
        nemesis=chosen_nemesis,
        master=master,
        trigger=trigger_text,
    )


@st.composite
def deploy_moments(draw: st.DrawFn, rounds: int, faults: Sequence[FaultRule]) -> str:
    """When an upgrade run deploys its next version: after a graceful stop after round 1..``rounds``-1, or (one in
    three) after one of ``faults`` that kills the driver (not after the sink's commit:
    :data:`~harness.engine.deploy.NO_DEPLOY_AFTER`; the caller leaves out faults in the last batch, which would
    leave version 2 nothing to run). Drawn last, so a seed keeps the rest of its schedule;
    shrinks towards the simplest deploy, a graceful stop after round 1."""
    kills = [f.id for f in faults if kills_driver(f.action) and f.point not in NO_DEPLOY_AFTER]
    # The round first: a deploy after a fault takes one draw more, so Hypothesis (which prefers fewer choices)
    # shrinks it to a graceful one.
    after_round = draw(st.integers(1, rounds - 1))
    if kills and draw(st.integers(0, 2)) == 2:
        return f"after-fault:{draw(st.sampled_from(kills))}"
    return f"after-round:{after_round}"


@st.composite
def state_axes(draw: st.DrawFn, stores: Sequence[str] = ()) -> dict[str, Any]:
    """A stateful example's state store (one of ``stores``, else of :data:`~harness.engine.spec.STATE_STORES`),
    checkpoint format version (one the store supports) and shuffle partitions (1..3). Drawn after everything else,
    so a seed keeps the rest of its schedule; each shrinks towards Spark's defaults (HDFS-backed, version 1, the
    session's 2 partitions), the store towards the first of ``stores``."""
    store = draw(st.sampled_from(list(stores or STATE_STORES)))
    fmt = draw(st.sampled_from(CHECKPOINT_FORMATS[store]))
    partitions = draw(st.sampled_from((2, 1, 3)))
    return {
        "state_store": None if store == "hdfs" else store,
        "checkpoint_format": None if fmt == 1 else fmt,
        "shuffle_partitions": None if partitions == 2 else partitions,
    }


def fault_batches(kind: str, rows: Sequence[Sequence[int]], limit: int | None, faults: int) -> int:
    """How many batch ids a run of trigger ``kind`` surely makes (faults aim below): a scheduled one's
    :func:`~harness.engine.trigger.sure_batches`, an epoch one's ``EPOCHS_PER_ROUND`` a round."""
    if kind in EPOCHS:
        return EPOCHS_PER_ROUND * len(rows)
    return sure_batches(kind, [dict(enumerate(r)) for r in rows], limit, faults)


def _batch_ids(batches: int) -> st.SearchStrategy[int]:
    """A batch id below ``batches``. From :data:`~harness.inspector.boundaries.COMPACT_INTERVAL` batches on, a
    file-sink log compaction batch (where Spark rewrites its sink log) is drawn as often as any other batch id;
    shorter schedules draw as before (a seed keeps its schedules)."""
    anywhere = st.integers(0, batches - 1)
    compactions = compaction_batches(batches)
    return st.one_of(st.sampled_from(compactions), anywhere) if compactions else anywhere


def describe_spec(spec: RunSpec) -> str:
    """One line: rounds, rows and faults of a drawn spec."""
    rows = " ".join("+".join(map(str, r)) for r in spec.rows or ())
    faults = "; ".join(r.describe() for r in spec.extra_faults) or "no faults"
    axes = f"; state {spec.axes()}" if spec.state_store or spec.checkpoint_format or spec.shuffle_partitions else ""
    nem = f"; nemesis {', '.join(spec.nemesis)}" if spec.nemesis else ""
    deploy = f"; deploy {spec.deploy or 'after-round:1'}" if spec.upgrade_to else ""
    trigger = f"; trigger {spec.trigger}" if spec.trigger else ""
    return f"seed {spec.seed}, {spec.effective_rounds} round(s) [{rows}], {faults}{nem}{axes}{deploy}{trigger}"
