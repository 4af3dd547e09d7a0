"""Spark's Python worker daemon with the libraries its workers import already imported.

Spark starts one ``pyspark.daemon`` per executor; it forks a Python worker for every task that finds no idle
one, and the worker imports what the task needs after the fork. A worker that reads or writes through a Python
data source (the harness's replayable source is one) imports pyarrow and pandas: 0.4 s here, paid again by every
fresh worker. A harness run kills the reused workers at every driver kill (:mod:`harness.spark.attach`: a worker
must not keep what the dead driver's code left in its memory), so the batch after each kill paid it on both
cores. This daemon imports those libraries once, before it forks: a fresh worker still runs no code a task ran
before, and starts without the import (measured in docs/bench.md).

Spark's own daemon imports them after the fork because pyarrow starts threads when imported, and a fork copies
only the forking thread. The threads these imports start (pyarrow's jemalloc background thread; numpy's
OpenBLAS pool, under pandas) are idle when the daemon forks and reset themselves in a forked child (each
registers fork handlers), which is what makes both safe under ``multiprocessing``'s fork.
:func:`daemon_confs` names this module only where the worker's Python is the harness's own (a local master);
a user who wants Spark's daemon sets ``spark.python.daemon.module`` to ``pyspark.daemon`` in the harness's
Spark confs, which win.
"""

from __future__ import annotations

import importlib

#: The conf Spark reads the daemon's module from.
DAEMON_CONF = "spark.python.daemon.module"
#: Library modules a data-source or Arrow worker imports; each one is skipped when it is not installed.
PRELOADED = (
    "pyarrow",
    "pandas",
    "pyspark.worker",
    "pyspark.sql.pandas.serializers",
    "pyspark.sql.pandas.types",
    "pyspark.sql.datasource",
    "pyspark.sql.datasource_internal",
    "pyspark.sql.conversion",
)


def daemon_confs(master: str) -> dict[str, str]:
    """The conf that makes Spark start this daemon, for a master whose Python workers run this interpreter
    (``local``, ``local[N]``); none for ``local-cluster`` or a cluster, whose executors may lack the harness."""
    return {DAEMON_CONF: __name__} if master == "local" or master.startswith("local[") else {}


def preload() -> list[str]:
    """Import :data:`PRELOADED`; the names that could not be imported (an older PySpark lacks some; a library
    that fails to import is left to the worker that needs it, so the daemon itself always starts)."""
    missing = []
    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except Exception:  # whatever fails here fails in a worker that needs it, as under Spark's daemon
            missing.append(name)
    return missing


if __name__ == "__main__":
    preload()
    from pyspark.daemon import manager

    manager()
