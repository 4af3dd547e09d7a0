"""Firing planned faults from inside the query's own processes.

Code at a crash point (a source method, a sink wrapper) calls
:meth:`FaultSite.maybe_fire`. An armed rule is *claimed* atomically
(``O_CREAT|O_EXCL`` on ``fired/<id>``) so it fires exactly once per run even
across restarts and concurrent tasks, recorded in ``ledger.jsonl`` (fsynced)
and then executed: SIGKILL to the whole process group of the driver (the
Python driver and its JVM share one group because the runner starts the
driver with ``start_new_session=True``; PySpark's worker daemon moves itself
and its workers into a group of their own (``os.setpgid(0, 0)`` in
``pyspark/daemon.py``), so a worker kills the driver's group, named by
``HARNESS_DRIVER_PGID`` in the environment, and then its own).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fault_injectors.plan import FaultPlan, KillRule

PLAN_FILE = "plan.json"
LEDGER_FILE = "ledger.jsonl"
FIRED_DIR = "fired"
#: Set by the child driver before its JVM starts; every process of the driver inherits it.
DRIVER_PGID_ENV = "HARNESS_DRIVER_PGID"


class FaultSite:
    """The fault plan of one run, as seen from a process that may crash.

    ``fault_dir`` holds ``plan.json`` (written by the runner before any driver
    starts and never changed during the run), ``fired/`` and ``ledger.jsonl``.
    A missing ``fault_dir`` or plan means "no faults": every call is a no-op.
    """

    def __init__(self, fault_dir: str | os.PathLike[str] | None) -> None:
        self.dir = Path(fault_dir) if fault_dir else None
        self._plan: FaultPlan | None = None

    @property
    def plan(self) -> FaultPlan:
        if self._plan is None:
            path = self.dir / PLAN_FILE if self.dir else None
            self._plan = FaultPlan.load(path) if path and path.exists() else FaultPlan()
        return self._plan

    def armed(self, point: str, batch: int | None) -> list[KillRule]:
        """Rules at ``point`` for ``batch`` that have not fired yet."""
        if batch is None:
            return []
        return [r for r in self.armed_at(point) if r.batch == batch]

    def armed_at(self, point: str) -> list[KillRule]:
        """Rules at ``point`` (any batch) that have not fired yet."""
        if self.dir is None:
            return []
        return [r for r in self.plan.rules if r.point == point and not (self.dir / FIRED_DIR / r.id).exists()]

    def maybe_fire(self, point: str, batch: int | None, *, partition: int | None = None, **context: Any) -> None:
        """Fire the first armed rule matching ``point``/``batch``/``partition``.

        Returns normally when nothing is armed (or another process claimed the
        rule first); otherwise does not return: the process group is killed.
        """
        for rule in self.armed(point, batch):
            if rule.partition is not None and partition is not None and rule.partition != partition:
                continue
            self.fire(rule, partition=partition, **context)

    def fire(self, rule: KillRule, **context: Any) -> None:
        """Claim ``rule``, record it in the ledger, then kill the process group."""
        assert self.dir is not None
        fired = self.dir / FIRED_DIR
        fired.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(fired / rule.id, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return
        os.close(fd)
        record = {
            "rule": asdict(rule),
            "time_ns": time.time_ns(),
            "pid": os.getpid(),
            "pgid": os.getpgid(0),
            "context": {k: v for k, v in context.items() if v is not None},
        }
        line = (json.dumps(record, sort_keys=True) + "\n").encode()
        fd = os.open(self.dir / LEDGER_FILE, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        if rule.action == "kill_process_group":
            kill_driver_groups()


def kill_driver_groups() -> None:
    """SIGKILL the driver's process group, then this process's own group.

    Does not return when called from inside the driver's process tree."""
    own = os.getpgid(0)
    driver = os.environ.get(DRIVER_PGID_ENV)
    if driver and driver.isdigit() and int(driver) != own:
        try:
            os.killpg(int(driver), signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.killpg(own, signal.SIGKILL)
    time.sleep(60)  # not reached: SIGKILL is delivered to this process too


def read_ledger(fault_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Fired-fault records in firing order; a torn last line (crash while
    appending) is ignored."""
    path = Path(fault_dir) / LEDGER_FILE
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return sorted(records, key=lambda r: r["time_ns"])


def never_fired(plan: FaultPlan, ledger: Iterable[dict[str, Any]]) -> list[KillRule]:
    """Planned rules with no ledger record."""
    fired = {r["rule"]["id"] for r in ledger}
    return [r for r in plan.rules if r.id not in fired]
