"""A platform's preemption as a fault action: ``platform.preempt``.

A managed platform that reclaims a node (a spot instance, a pod evicted for a higher-priority one) does
not SIGKILL the driver: it sends SIGTERM to every process of the container, waits a grace period, then
SIGKILLs what is left. Here the Python driver dies at the SIGTERM and Spark's JVM starts its shutdown hooks;
the harness, seeing its driver gone, SIGKILLs the rest of the driver's process group at once, so the JVM
gets a few milliseconds of shutdown rather than the grace period (the reaper's SIGKILL is the platform's,
for what the harness would not reach). At a point where a watcher holds the JVM stopped (a JVM sink's
commit window) the JVM never runs its hooks.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fault_injectors.actions import Action
from fault_injectors.kills import DRIVER_PGID_ENV
from fault_injectors.plan import FaultRule

#: Seconds between the SIGTERM and the SIGKILL (Kubernetes' terminationGracePeriodSeconds, scaled down).
GRACE_S = 3.0
_REAPER = (
    "import os, signal, sys, time\n"
    "time.sleep(float(sys.argv[1]))\n"
    "for group in sys.argv[2:]:\n"
    "    try:\n"
    "        os.killpg(int(group), signal.SIGKILL)\n"
    "    except (ProcessLookupError, PermissionError):\n"
    "        pass\n"
)


def preempt(rule: FaultRule, batch: int | None, fault_dir: Path | None) -> None:
    """SIGTERM the driver's process group and this process's own; SIGKILL both ``GRACE_S`` later."""
    groups = {os.getpgid(0)}
    driver = os.environ.get(DRIVER_PGID_ENV, "")
    if driver.isdigit():
        groups.add(int(driver))
    # The reaper outlives the groups it kills: a session of its own, as the platform's node agent.
    subprocess.Popen(
        [sys.executable, "-c", _REAPER, str(GRACE_S), *map(str, sorted(groups))],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for group in sorted(groups, key=lambda g: g == os.getpgid(0)):  # this process's own group last
        try:
            os.killpg(group, signal.SIGTERM)
        except ProcessLookupError:
            pass
    time.sleep(GRACE_S * 3)  # a process that handles SIGTERM waits here for the reaper's SIGKILL


FAULT_ACTIONS = (
    Action(
        name="platform.preempt",
        verb="preempt",
        doc=f"SIGTERM the driver's process groups as a platform reclaiming the node does, SIGKILL {GRACE_S:g} s later",
        effect="driver",
        run=preempt,
        from_watcher=True,
        drawn=True,
    ),
)
