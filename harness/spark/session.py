"""Building SparkSessions the way the harness needs them, in any process.

Known traps handled here: Python workers must run the same interpreter as the
driver (``PYSPARK_PYTHON``), Spark must bind to loopback (``SPARK_LOCAL_IP``),
and test sessions should be small (few shuffle partitions, no UI).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.spark.attach import attach_session, attached
from harness.spark.cds import java_options
from harness.spark.connect import ConnectServer, inner_master, is_connect
from harness.spark.daemon import daemon_confs
from harness.spark.jars import with_cached_jars
from harness.spark.project import spark_confs
from harness.spark.standalone import APP_CONFS, executor_env_confs

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[2]"

#: Confs that keep a local test session fast and deterministic.
DEFAULT_CONFS: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.python.worker.reuse": "true",
    "spark.sql.adaptive.enabled": "false",
    "spark.driver.memory": "1g",
    "spark.sql.streaming.stopTimeout": "30s",
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
}


#: Directory whose ``sitecustomize`` makes Spark's Python processes import pyspark from the installed
#: package instead of ``pyspark.zip`` (0.45 s less per start of a Python streaming source; see the module).
SITEPATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sitepath")
#: Set to ``1`` to keep Spark's own import order (pyspark from its zip) in Spark's Python processes.
ZIP_IMPORTS_ENV = "HARNESS_SPARK_ZIP_IMPORTS"


def spark_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment for a process that runs Spark: ``base`` (default ``os.environ``)
    plus the interpreter and loopback settings the harness relies on, and the
    repository root and :data:`SITEPATH` first on ``PYTHONPATH``."""
    env = dict(os.environ if base is None else base)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    env.setdefault("PYTHONHASHSEED", "0")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # harness/spark/ -> repo
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    wanted = [root] if env.get(ZIP_IMPORTS_ENV) == "1" else [root, SITEPATH]
    paths = [p for p in paths if p != SITEPATH]
    env["PYTHONPATH"] = os.pathsep.join([*[w for w in wanted if w not in paths], *paths])
    return env


def build_session(
    app_name: str = "exactly-once-harness",
    master: str = DEFAULT_MASTER,
    confs: Mapping[str, str] | None = None,
    *,
    log_file: Path | None = None,
) -> SparkSession:
    """A SparkSession with :data:`DEFAULT_CONFS` (overridden by ``confs``; the driver's JVM
    options gain the class-data archive of :mod:`harness.spark.cds` when it exists; ``spark.jars``
    gains the connectors set-up cached, :mod:`harness.spark.jars`; the user's
    :data:`harness.spark.project.SPARK_CONFS_ENV` confs replace the defaults) and the
    ``replayable`` data source registered. A ``connect:<inner master>`` master
    gives a Spark Connect client of a loopback server started here
    (:mod:`harness.spark.connect`). Sets this process's environment as
    :func:`spark_env` describes before the JVM starts. ``log_file``: a JVM this
    call starts writes its output there (Spark's log, its stack traces, the JVM's
    own warnings), not on the terminal of a command that prints a report."""
    os.environ.update(spark_env())
    from pyspark.sql import SparkSession

    from scenarios.replayable_source import ReplayableDataSource

    # The user's confs (HARNESS_SPARK_CONFS, the ini option harness_spark_confs) replace the test defaults;
    # the harness's own for this driver come last; the cached connectors are appended to list confs.
    # The warm worker daemon (harness.spark.daemon) only where the workers run this interpreter; a user's own
    # spark.python.daemon.module wins.
    defaults = {**DEFAULT_CONFS, **daemon_confs(inner_master(master))}
    all_confs = with_cached_jars({**defaults, **spark_confs(), **dict(confs or {})})
    java_key = "spark.driver.extraJavaOptions"
    all_confs[java_key] = java_options(all_confs.get(java_key, ""))
    if inner_master(master).startswith("spark://"):  # a cluster: executors get the driver's children's settings
        all_confs = {**APP_CONFS, **executor_env_confs(os.environ), **all_confs}
    if is_connect(master):
        return _connect_session(app_name, master, all_confs)
    if attached():  # the pool hosts the JVM, started with these confs (harness.engine.jvmhost)
        spark = attach_session()
    else:
        if log_file is not None:
            _start_jvm_logging_to(log_file, app_name, master, all_confs)
        builder = SparkSession.builder.appName(app_name).master(master)
        for key, value in all_confs.items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
    spark.dataSource.register(ReplayableDataSource)
    return spark


def _start_jvm_logging_to(log_file: Path, app_name: str, master: str, confs: Mapping[str, str]) -> None:
    """Start this process's JVM (as the session builder would, with the same confs) with its stdout and stderr
    appended to ``log_file``; nothing when a JVM runs already."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False).setMaster(master).setAppName(app_name).setAll(list(confs.items()))
    log_file.parent.mkdir(parents=True, exist_ok=True)
    start: Callable[..., Any] = launch_gateway  # untyped in PySpark
    with open(log_file, "ab") as out:  # the child keeps its own copy of the descriptor
        gateway = start(conf, popen_kwargs={"stdout": out, "stderr": out})
    SparkContext._gateway, SparkContext._jvm = gateway, gateway.jvm


#: The Connect server of this process (see :mod:`harness.spark.connect`), kept alive with it.
_SERVERS: list[ConnectServer] = []


def _connect_session(app_name: str, master: str, confs: Mapping[str, str]) -> SparkSession:
    """A Spark Connect client session on a loopback server started here (``connect:<inner master>``)."""
    from pyspark.sql import SparkSession

    from scenarios.replayable_source import ReplayableDataSource

    server = ConnectServer(inner_master(master), {"spark.app.name": app_name, **confs}, spark_env())
    _SERVERS.append(server)
    server.wait_ready()
    spark = SparkSession.builder.remote(server.url).getOrCreate()
    spark.dataSource.register(ReplayableDataSource)
    return spark


#: Runtime SQL confs the last query of this process set for its scenario.
_SCENARIO_CONFS: set[str] = set()
#: The session's own values of the keys a run's confs replaced (restored when a later run does not set them).
_SESSION_VALUES: dict[str, str] = {}


def apply_run_confs(spark: SparkSession, confs: Mapping[str, str]) -> None:
    """Set ``confs`` for the next query, first restoring what the previous run's query set (a driver serves many
    runs in turn): a key the session had before (e.g. ``spark.sql.shuffle.partitions`` of :data:`DEFAULT_CONFS`)
    gets that value back, any other is unset."""
    for key in _SCENARIO_CONFS - set(confs):
        before = _SESSION_VALUES.pop(key, None)
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
    for key, value in confs.items():
        if key not in _SCENARIO_CONFS and key not in _SESSION_VALUES:
            before = spark.conf.get(key, None)
            if before is not None:
                _SESSION_VALUES[key] = before
        spark.conf.set(key, value)
    _SCENARIO_CONFS.clear()
    _SCENARIO_CONFS.update(confs)


def reader_session(spark: SparkSession) -> SparkSession:
    """A session that reads a sink's output as a new reader would, for the verdict.

    A clone of the writer's session (Spark's ``cloneSession``): its runtime confs, temporary views, functions
    and registered Python data sources, but catalogs of its own, so a table a connector's catalog cached while
    the query wrote (Iceberg's caching catalog keeps the snapshot it loaded) is loaded afresh instead of read
    stale. Where the JVM session cannot be cloned, ``newSession()`` with the writer's runtime confs copied;
    Spark Connect has neither: there the writer's session is returned."""
    from pyspark.sql import SparkSession as Session

    try:
        return Session(spark.sparkContext, spark._jsparkSession.cloneSession())
    except Exception:  # Spark Connect (no JVM session), or a Spark without cloneSession
        pass
    try:
        fresh = spark.newSession()
    except Exception:  # Spark Connect: PySparkNotImplementedError
        return spark
    ours: dict[str, str] = fresh.conf.getAll
    for key, value in spark.conf.getAll.items():
        if ours.get(key) == value:
            continue
        try:
            fresh.conf.set(key, value)
        except Exception:  # static and core confs: the same in both sessions anyway
            continue
    return fresh
