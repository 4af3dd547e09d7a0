"""A driver process on a JVM that another process keeps (:mod:`harness.engine.jvmhost`).

Spark's driver is a Python process and the JVM it starts; a ``foreachBatch`` function runs in the Python
process. A pool that hosts the JVM apart starts each driver's Python process with the host's gateway in its
environment (PySpark's own ``PYSPARK_GATEWAY_PORT`` and ``PYSPARK_GATEWAY_SECRET``), and after a kill of that
Python process alone the next one attaches to the live JVM in about 0.5 s instead of starting one (~3 s of
JVM and SparkContext, then cold Python workers).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: ``1`` in a driver process the pool started on a hosted JVM.
ATTACH_ENV = "HARNESS_ATTACH_JVM"
#: ``1`` in a spare driver process: it attaches only when told to (``{"cmd": "attach"}``).
ATTACH_WAIT_ENV = "HARNESS_ATTACH_WAIT"
GATEWAY_PORT_ENV = "PYSPARK_GATEWAY_PORT"
GATEWAY_SECRET_ENV = "PYSPARK_GATEWAY_SECRET"


def attached() -> bool:
    """Whether this process drives a hosted JVM (and must never stop its SparkContext)."""
    return os.environ.get(ATTACH_ENV) == "1" and GATEWAY_PORT_ENV in os.environ


def attach_session() -> SparkSession:
    """A new SparkSession of this process on the hosted JVM's SparkContext.

    The session is built on the SparkContext alone, so Spark gives it a new shared state: an empty in-memory
    catalog, no global temporary views, no cached tables, as a new JVM would have. The earlier driver process's
    listeners are removed, its jobs cancelled and its streaming queries (failed or failing: their Python is gone)
    stopped first; a spare taking over from it also kills Spark's Python workers, which, reused, would keep what
    its code left in their memory. What stays is below any session: loaded classes, the
    SparkContext's Hadoop configuration and added files, persisted and broadcast blocks, and what libraries keep
    JVM-wide (Delta's log cache, say)."""
    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    connect: Callable[[], Any] = launch_gateway  # untyped in PySpark
    gateway = connect()  # connects to the host's gateway: PYSPARK_GATEWAY_PORT is set
    jvm = gateway.jvm
    jsc = jvm.org.apache.spark.api.java.JavaSparkContext(jvm.org.apache.spark.SparkContext.getOrCreate())
    sc = SparkContext(gateway=gateway, jsc=jsc)
    session_class = jvm.org.apache.spark.sql.classic.SparkSession
    previous = session_class.getDefaultSession()
    if previous.isDefined():
        _clear(previous.get())
        jsc.sc().cancelAllJobs()  # jobs the dead process started from threads of its own
    if os.environ.get(ATTACH_WAIT_ENV) == "1":  # a spare takes over from a driver process on this JVM
        daemon = jsc.getConf().get("spark.python.daemon.module", "pyspark.daemon")  # ours, Spark's or the user's
        _kill_python_workers(int(jvm.java.lang.ProcessHandle.current().pid()), daemon)
    fresh = session_class(jsc.sc())  # no existing shared state: Spark makes a new one
    session_class.setDefaultSession(fresh)
    session_class.setActiveSession(fresh)
    return SparkSession(sc, jsparkSession=fresh)


def _clear(session: object) -> None:
    """Remove a dead driver process's listeners (their callbacks would reach the new one), then stop its queries."""
    streams = session.streams()  # type: ignore[attr-defined]
    for listener in streams.listListeners():
        streams.removeListener(listener)
    for query in streams.active():
        query.stop()


def _kill_python_workers(jvm_pid: int, daemon_module: str = "pyspark.daemon") -> list[int]:
    """SIGKILL the Python workers of the JVM's worker daemons (``python -m <daemon_module>``, the session's
    ``spark.python.daemon.module``), so no reused worker keeps what the dead driver's code left in its memory
    (``spark.python.worker.reuse``); returns their pids. The daemons live on (Spark writes to them and cannot
    lose one): they fork new workers from a process that never ran user code, and Spark drops dead idle ones."""
    children: dict[int, list[tuple[int, bytes]]] = {}
    killed: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append((int(entry.name), cmdline))
    for daemon, cmdline in children.get(jvm_pid, []):
        if f"-m\0{daemon_module}\0".encode() not in cmdline + b"\0":
            continue
        for worker, _ in children.get(daemon, []):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(worker, signal.SIGKILL)
                killed.append(worker)
    return killed
