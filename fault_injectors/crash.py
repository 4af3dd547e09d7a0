"""Firing planned faults from inside the query's own processes.

Code at a crash point (a source method, a sink wrapper, a checkpoint watcher)
calls :meth:`FaultSite.maybe_fire`. A matching rule is *claimed* atomically
(``O_CREAT|O_EXCL`` on ``fired/<id>.<n>``, ``n < times``) so it fires at most
``times`` times per run, even across restarts and concurrent tasks; each
firing is recorded in ``ledger.jsonl`` (fsynced, with the checkpoint state at
that moment) and then executed by its action (:mod:`fault_injectors.actions`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fault_injectors.kills import InjectedFault
from fault_injectors.plan import FaultPlan, FaultRule
from fault_injectors.registry import action

PLAN_FILE = "plan.json"
LEDGER_FILE = "ledger.jsonl"
FIRED_DIR = "fired"
MASK64 = (1 << 64) - 1


def _mix(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def decide(seed: int, rule_id: str, *keys: int | None) -> float:
    """A deterministic draw in [0, 1) for one occurrence of a rule."""
    h = _mix(seed & MASK64)
    for ch in rule_id.encode():
        h = _mix(h ^ ch)
    for k in keys:
        h = _mix(h ^ ((-1 if k is None else k) & MASK64))
    return (h >> 11) / float(1 << 53)


class FaultSite:
    """The fault plan of one run, as seen from a process that may fire a fault.

    ``fault_dir`` holds ``plan.json`` (written before any driver starts and
    never changed during the run), ``fired/`` and ``ledger.jsonl``. A missing
    ``fault_dir`` or plan means "no faults": every call is a no-op.
    ``checkpoint`` (optional) lets the ledger record which of ``offsets/N``
    and ``commits/N`` existed when a fault fired.
    """

    def __init__(self, fault_dir: str | os.PathLike[str] | None, checkpoint: str | os.PathLike[str] | None = None):
        self.dir = Path(fault_dir) if fault_dir else None
        self.checkpoint = Path(checkpoint) if checkpoint else None
        self._plan: FaultPlan | None = None

    @property
    def plan(self) -> FaultPlan:
        if self._plan is None:
            path = self.dir / PLAN_FILE if self.dir else None
            self._plan = FaultPlan.load(path) if path and path.exists() else FaultPlan()
        return self._plan

    def fired_count(self, rule: FaultRule) -> int:
        if self.dir is None:
            return 0
        try:
            return sum(1 for n in os.listdir(self.dir / FIRED_DIR) if n.rsplit(".", 1)[0] == rule.id)
        except FileNotFoundError:
            return 0

    def armed_at(self, point: str) -> list[FaultRule]:
        """Rules at ``point`` (any batch) that may still fire."""
        if self.dir is None:
            return []
        return [r for r in self.plan.rules if r.point == point and (r.times is None or self.fired_count(r) < r.times)]

    def armed(
        self,
        point: str,
        batch: int | None,
        partition: int | None = None,
        *,
        step: int | None = None,
        wrapper: str | None = None,
    ) -> list[FaultRule]:
        """Rules at ``point`` whose batch/partition (and, given, step/wrapper) conditions match and that may
        still fire."""
        return [
            r
            for r in self.armed_at(point)
            if (r.batch is None or r.batch == batch)
            and (r.partition is None or partition is None or r.partition == partition)
            and (step is None or r.step is None or r.step == step)
            and (wrapper is None or r.wrapper is None or r.wrapper == wrapper)
        ]

    def maybe_fire(
        self,
        point: str,
        batch: int | None,
        *,
        partition: int | None = None,
        attempt: int | None = None,
        step: int | None = None,
        wrapper: str | None = None,
        recorded_batch: int | None = None,
        **context: Any,
    ) -> None:
        """Fire the first armed rule whose conditions all hold.

        Returns normally when nothing fires; otherwise the rule's action
        happens (the process dies, or :class:`InjectedFault` is raised).
        ``recorded_batch``: the batch the ledger names, when the fault lands in another batch than the one its
        rule is planned at (a retention purge after ``commits/N`` lands while a later batch runs).
        """
        for rule in self.armed(point, batch, partition, step=step, wrapper=wrapper):
            if rule.attempt is not None and attempt is not None and rule.attempt != attempt:
                continue
            if (
                rule.probability is not None
                and decide(self.plan.seed, rule.id, batch, partition, attempt) >= rule.probability
            ):
                continue
            if self._claim(rule):
                landed = batch if recorded_batch is None else recorded_batch
                self._record(
                    rule, landed, dict(context, partition=partition, attempt=attempt, step=step, wrapper=wrapper)
                )
                execute(rule, landed, self.dir)

    def _claim(self, rule: FaultRule) -> bool:
        assert self.dir is not None
        fired = self.dir / FIRED_DIR
        fired.mkdir(parents=True, exist_ok=True)
        if rule.times is None:
            return True
        for n in range(rule.times):
            try:
                os.close(os.open(fired / f"{rule.id}.{n}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                return True
            except FileExistsError:
                continue
        return False

    def _record(self, rule: FaultRule, batch: int | None, context: dict[str, Any]) -> None:
        assert self.dir is not None
        if self.checkpoint is not None and batch is not None:
            context["offsets_logged"] = (self.checkpoint / "offsets" / str(batch)).exists()
            context["commit_logged"] = (self.checkpoint / "commits" / str(batch)).exists()
        record = {
            "rule": asdict(rule),
            "batch": batch,
            "time_ns": time.time_ns(),
            "pid": os.getpid(),
            "pgid": os.getpgid(0),
            "context": {k: v for k, v in context.items() if v is not None},
        }
        line = (json.dumps(record, sort_keys=True, default=str) + "\n").encode()
        fd = os.open(self.dir / LEDGER_FILE, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)


def execute(rule: FaultRule, batch: int | None, fault_dir: Path | None = None) -> None:
    """Carry out ``rule.action`` in this process (``fault_dir``: the run's, for a server of its resources);
    then raise :class:`InjectedFault` unless the action took down a daemon (the firing code goes on) or
    did not return (this process died)."""
    chosen = action(rule.action)
    chosen.execute(rule, batch, fault_dir)
    if chosen.effect != "daemon":
        raise InjectedFault(f"injected fault {rule.id}: {rule.describe()} (fired in batch {batch})")


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The JSON lines of an append-only record file in file order; a missing file is empty and a torn line
    (a process killed while appending) is ignored."""
    p = Path(path)
    if not p.exists():
        return []
    records = []
    for line in p.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def read_ledger(fault_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Fired-fault records in firing order; a torn last line (crash while
    appending) is ignored."""
    return sorted(read_records(Path(fault_dir) / LEDGER_FILE), key=lambda r: r["time_ns"])


def never_fired(plan: FaultPlan, ledger: Iterable[dict[str, Any]]) -> list[FaultRule]:
    """Planned rules with no ledger record."""
    fired = {r["rule"]["id"] for r in ledger}
    return [r for r in plan.rules if r.id not in fired]
