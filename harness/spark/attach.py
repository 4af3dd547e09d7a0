"""A driver process on a JVM that another process keeps (:mod:`harness.engine.jvmhost`).

Spark's driver is a Python process and the JVM it starts; a ``foreachBatch`` function runs in the Python
process. A pool that hosts the JVM apart starts each driver's Python process with the host's gateway in its
environment (PySpark's own ``PYSPARK_GATEWAY_PORT`` and ``PYSPARK_GATEWAY_SECRET``), and after a kill of that
Python process alone the next one attaches to the live JVM in about 0.5 s instead of starting one (~3 s of
JVM and SparkContext, then cold Python workers).
"""

from __future__ import annotations

import os
from collections.abc import Callable
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
    streaming queries (failed or failing: their Python is gone) are stopped and its listeners removed first.
    What stays is below any session: loaded classes, Spark's Python worker daemon, block manager data, and what
    libraries keep in the JVM outside a session (Delta's log cache, say)."""
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
    fresh = session_class(jsc.sc())  # no existing shared state: Spark makes a new one
    session_class.setDefaultSession(fresh)
    session_class.setActiveSession(fresh)
    return SparkSession(sc, jsparkSession=fresh)


def _clear(session: object) -> None:
    """Stop a dead driver process's queries and remove its listeners (their callbacks would reach the new one)."""
    streams = session.streams()  # type: ignore[attr-defined]
    for query in streams.active():
        query.stop()
    for listener in streams.listListeners():
        streams.removeListener(listener)
