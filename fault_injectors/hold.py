"""Holding sibling tasks so that per-task faults are deterministic.

A rule at a per-task point (``source.read``, ``sink.write.*``) aimed at
partition *p* of batch *N* would otherwise race the other tasks of batch *N*:
whether a sibling had task-committed (a file in ``_temporary/0`` that the
restarted job's commit merges a second time) or published its rows when the
fault fired depended on timing, so a failing run did not replay. Every task
calls :func:`hold_for_sibling_fault` before its first row: a sibling waits
until the rule has fired, so it has produced nothing by then.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from fault_injectors.crash import FaultSite
from fault_injectors.observe import observe
from fault_injectors.plan import FaultRule
from fault_injectors.points import per_task
from fault_injectors.registry import action

#: Per-task crash points fired by the source's read (``write_points`` on) and by a sink writer's ``write``.
SOURCE_TASK_POINTS = per_task()
SINK_TASK_POINTS = ("sink.write.start", "sink.write.mid", "sink.write.end")
#: A sibling stops waiting when no target task has started within this time (a separate job, no free slot).
START_GRACE_S = 2.0
#: ... and in any case after this long.
HOLD_TIMEOUT_S = 10.0
#: After a soft fault (``raise``, ``exit``: the firing code fails) fired, how long a sibling waits to be
#: cancelled with the failed job.
SOFT_HOLD_S = 5.0
STARTED_DIR = "started"


def target_partition(rule: FaultRule) -> int:
    """The partition a per-task rule is aimed at; a rule without one is aimed at partition 0."""
    return rule.partition if rule.partition is not None else 0


def _marker(fault_dir: Path, batch: int | None, partition: int) -> Path:
    return fault_dir / STARTED_DIR / f"{'any' if batch is None else batch}.{partition}"


def hold_for_sibling_fault(
    site: FaultSite,
    points: Iterable[str],
    batch: int | None,
    partition: int | None,
    attempt: int | None,
    timeout_s: float | None = None,
) -> None:
    """Block this task while a fault aimed at *another* task of ``batch`` (at one of
    ``points``) may still fire; return at once when none is armed.

    Guarantees, when the targeted task runs concurrently with this one (the
    tasks of one stage on free slots): this task produces nothing before the
    fault fires. Afterwards it dies with the process groups (a SIGKILL: it
    waits for that), or waits up to :data:`SOFT_HOLD_S` to be cancelled with
    the failed job (``raise``/``exit``; with task retries, e.g.
    ``local-cluster``, it then goes on and records ``sibling_not_cancelled``).
    A task that is itself a target waits only for targets with a lower
    partition, so two targets never wait for each other. Not waited for:
    rules with a ``probability`` or unlimited ``times``, and targets that have
    not started within :data:`START_GRACE_S` (they run in a later job, e.g.
    ``toLocalIterator``, or need this task's slot: ``hold_released``), and
    nothing longer than :data:`HOLD_TIMEOUT_S` (``hold_timed_out``).
    """
    if site.dir is None or partition is None:
        return
    fault_dir = site.dir
    points = tuple(points)
    limit = HOLD_TIMEOUT_S if timeout_s is None else timeout_s

    def candidates() -> list[FaultRule]:
        return [
            r
            for point in points
            for r in site.armed(point, batch)
            if r.probability is None and r.times is not None and r.attempt in (None, attempt)
        ]

    rules = candidates()
    if not rules:
        return
    is_target = any(target_partition(r) == partition for r in rules)
    if is_target:
        marker = _marker(fault_dir, batch, partition)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()

    def pending() -> list[FaultRule]:
        others = [r for r in candidates() if target_partition(r) != partition]
        return [r for r in others if target_partition(r) < partition] if is_target else others

    waiting = pending()
    awaited = {r.id: r for r in waiting}
    t0 = time.monotonic()
    where = {"batch": batch, "partition": partition}
    while waiting:
        elapsed = time.monotonic() - t0
        started = [r for r in waiting if _marker(fault_dir, batch, target_partition(r)).exists()]
        if not started and elapsed >= START_GRACE_S:
            why = "the targeted task did not start alongside this one (a later job, or no free slot)"
            observe(fault_dir, "hold_released", rules=[r.id for r in waiting], **where, why=why)
            return
        if elapsed >= limit:
            why = f"no fault within {limit:.0f} s; this task went on, so the fault may race its output"
            observe(fault_dir, "hold_timed_out", rules=[r.id for r in waiting], **where, why=why)
            return
        time.sleep(0.01)
        waiting = pending()
    effects = {action(r.action).effect for r in awaited.values()}
    if "driver" in effects:
        time.sleep(limit)  # the claim is on disk just before the driver dies: die with it here
    elif "firing" in effects:
        time.sleep(SOFT_HOLD_S)  # normally cancelled meanwhile: the job failed with the faulted task
    else:
        return
    observe(fault_dir, "sibling_not_cancelled", rules=sorted(awaited), **where, pid=os.getpid())
