"""Taking processes down: the driver's process groups, the executor JVM of a task, a daemon of the
harness's standalone cluster. The fault actions (:mod:`fault_injectors.actions`) carry out their faults
with these.

Process groups: the Python driver and its JVM share one group because the runner starts the driver with
``start_new_session=True``; PySpark's worker daemon moves itself and its workers into a group of their own
(``os.setpgid(0, 0)`` in ``pyspark/daemon.py``), so a kill from a worker signals the driver's group, named
by ``HARNESS_DRIVER_PGID`` in the environment, and then its own.

A pool that hosts Spark's JVM apart (:mod:`harness.engine.jvmhost`) runs the driver's Python process in a group
of its own, attached to the host's JVM: ``HARNESS_DRIVER_GROUPS`` then names a file listing both groups, and a
kill of the driver takes both down, while :func:`kill_driver_python` takes down the Python process alone.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from harness.errors import Observed

#: Set by the child driver before its JVM starts; every process of the driver inherits it.
DRIVER_PGID_ENV = "HARNESS_DRIVER_PGID"
#: A file listing the process groups of a driver whose JVM a pool hosts apart (set in the host and in the driver).
DRIVER_GROUPS_ENV = "HARNESS_DRIVER_GROUPS"
#: Where the harness's standalone cluster lists its daemons (``harness.spark.standalone``).
CLUSTER_FILE_ENV = "HARNESS_CLUSTER_FILE"


class InjectedFault(Observed, RuntimeError):
    """Raised by a fault rule with ``action="raise"``."""


def driver_groups() -> list[int]:
    """The driver's process groups, in the order to kill them: with a hosted JVM the groups its file lists (the
    Python processes first, the JVM's host last, so no driver outlives its JVM long enough to report its gateway's
    loss as an error), then ``HARNESS_DRIVER_PGID``."""
    found: list[str] = []
    listing = os.environ.get(DRIVER_GROUPS_ENV)
    if listing:
        try:
            found += Path(listing).read_text().split()
        except OSError:
            pass  # the pool is gone: only the group of the environment is left to kill
    found.append(os.environ.get(DRIVER_PGID_ENV, ""))
    return list(dict.fromkeys(int(g) for g in found if g.isdigit()))


def kill_driver_groups() -> None:
    """SIGKILL the driver's process groups, then this process's own group.

    Does not return when called from inside the driver's process tree."""
    own = os.getpgid(0)
    for group in driver_groups():
        if group != own:
            try:
                os.killpg(group, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass  # gone already, or a listed group's number reused by a process not ours
    os.killpg(own, signal.SIGKILL)
    time.sleep(60)  # not reached: SIGKILL is delivered to this process too


def kill_driver_python() -> None:
    """SIGKILL the driver's Python process alone when a pool hosts its JVM apart and this is that process;
    anywhere else (a JVM that dies with its Python, a Python worker) the whole driver, as
    :func:`kill_driver_groups`. Does not return."""
    own = os.getpgid(0)
    if os.environ.get(DRIVER_GROUPS_ENV) and os.environ.get(DRIVER_PGID_ENV) == str(own) == str(os.getpid()):
        os.killpg(own, signal.SIGKILL)
        time.sleep(60)  # not reached
    kill_driver_groups()


def _parent(pid: int) -> tuple[int, str]:
    stat = Path(f"/proc/{pid}/stat").read_text()
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    return int(stat[stat.rindex(")") + 2 :].split()[1]), comm


def kill_executor_jvm() -> None:
    """SIGKILL the nearest ``java`` ancestor of this process (the executor JVM
    that forked this Python worker's daemon). Refuses to kill the driver's JVM
    (whose parent is the Python driver, pid ``HARNESS_DRIVER_PGID``): in local
    mode there is no executor to kill."""
    pid = os.getppid()
    driver = os.environ.get(DRIVER_PGID_ENV)
    while pid > 1:
        parent, comm = _parent(pid)
        if comm == "java":
            if driver and parent == int(driver):
                raise InjectedFault(
                    "kill_executor fired in local mode: the nearest JVM is the driver's; use local-cluster[...]"
                )
            os.kill(pid, signal.SIGKILL)
            return
        pid = parent
    raise InjectedFault("kill_executor: no executor JVM among this process's ancestors")


def _ancestors(pid: int) -> list[int]:
    chain = []
    while pid > 1:
        chain.append(pid)
        try:
            pid = _parent(pid)[0]
        except (OSError, ValueError, IndexError):
            break
    return chain


def kill_cluster_daemon(action: str, *, master: bool) -> None:
    """SIGKILL the process group of a daemon of the harness's standalone cluster (``$HARNESS_CLUSTER_FILE``)
    for ``action``: the ``master``, else the worker this process runs under (an executor's Python worker),
    else the first worker. A worker's group holds its executors, which die with it; this
    process too, when it ran under the killed daemon."""
    path = os.environ.get(CLUSTER_FILE_ENV)
    if not path or not Path(path).exists():
        raise InjectedFault(
            f"{action} fired without a standalone cluster started by the harness (--cluster standalone:W)"
        )
    cluster = json.loads(Path(path).read_text())
    chain = _ancestors(os.getpid())
    if master:
        target = int(cluster["master"]["pid"])
    else:
        workers = [int(w["pid"]) for w in cluster["workers"]]
        target = next((p for p in chain if p in workers), workers[0])
    try:
        os.killpg(target, signal.SIGKILL)
    except ProcessLookupError:
        pass  # already gone (killed by another rule); the supervisor is restarting it
    if target in chain:
        os.kill(os.getpid(), signal.SIGKILL)
