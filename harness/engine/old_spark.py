"""A Spark upgrade run's first rounds: an older PySpark runs the scenario's query over the same run directory.

``python -m harness.engine.old_spark RUN_DIR`` is started with the Python of an older PySpark's virtual
environment (``RunSpec.old_pyspark``; ``bin/test-spark-upgrade`` builds them from PyPI). It builds a plain
local SparkSession of that PySpark, runs the scenario's query once (``availableNow``: one batch per round of a
file-directory source) with the scenario's, the spec's and the state store's confs, prints one JSON line and
exits. No fault fires in it, and nothing of the project's Spark plumbing is used (the class-data archive, the
Maven jars and the site path are built for the project's PySpark): the run directory is all it shares. The
project's PySpark then resumes the checkpoint and the sink (``harness.engine.runner``).

This module must import under PySpark 3.5: the scenario, its source and sink, :mod:`harness.engine.spec` and
:mod:`harness.engine.rundir` do; the replayable source (``pyspark.sql.datasource``, 4.0+) does not, which is
why only a :class:`~scenarios.sources.FileDirectory` source may run here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.errors import HarnessFailure
from harness.spark.procs import kill_group

#: The mark a Spark upgrade leaves among a run's fired faults (like a deploy's).
SPARK_UPGRADE = "spark-upgrade"
#: Seconds one round of the older PySpark may take (a JVM start, one batch, a stop).
ROUND_TIMEOUT_S = 600.0


class OldSparkError(HarnessFailure, RuntimeError):
    """The older PySpark did not run its round; the message says why and where its log is."""


def old_env(python: str) -> dict[str, str]:
    """The environment of the older PySpark's process: its own Python for the workers, no ``SPARK_HOME`` or
    class path of the project's PySpark, the repository (and the working directory) importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_", "JAVA_TOOL"))}
    env.update(PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python, SPARK_LOCAL_IP="127.0.0.1")
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([root, os.getcwd()])
    return env


def run_round(paths: RunPaths, python: str, round_no: int) -> dict[str, Any]:
    """Run the scenario's query once under the older PySpark at ``python``; its report (``pyspark`` version,
    ``batches`` the query ran, ``seconds``). Its stderr goes to ``logs/old-spark-<round>.log``."""
    if not os.access(python, os.X_OK):
        raise OldSparkError(
            f"old_pyspark {python!r} is not an executable Python; build the older PySparks with bin/test-spark-upgrade"
        )
    log = paths.logs / f"old-spark-{round_no}.log"
    answer = paths.logs / f"old-spark-{round_no}.out"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as err, open(answer, "wb") as out:
        # Its own process group, SIGKILLed once its Python has exited: a JVM the older PySpark leaves behind
        # (orphaned, still holding 400 MB; measured about once in 50 rounds) goes with it. The report goes to a
        # file, not a pipe: that JVM inherits the round's stdout, and reading a pipe to its end waited for the
        # JVM, the whole timeout (measured: a default-suite test stalled 10 minutes).
        proc = subprocess.Popen(
            [python, "-m", "harness.engine.old_spark", str(paths.root)],
            stdout=out,
            stderr=err,
            env=old_env(python),
            start_new_session=True,
        )
        try:
            proc.wait(timeout=ROUND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise OldSparkError(
                f"round {round_no}: the older PySpark ran past {ROUND_TIMEOUT_S:.0f} s; see {log}"
            ) from None
        finally:
            kill_group(proc.pid)
            proc.wait()
    lines = answer.read_text(errors="replace").strip().splitlines()
    report: dict[str, Any] = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    if proc.returncode != 0 or "error" in report or not report:
        why = report.get("error") or f"exit status {proc.returncode}"
        raise OldSparkError(f"round {round_no}: the older PySpark ({python}) failed: {why}; its log: {log}")
    return report


def _query_once(root: Path) -> dict[str, Any]:
    import pyspark
    from pyspark.sql import SparkSession

    from fault_injectors.crash import FaultSite
    from harness.engine.between import source_run
    from scenarios import get_scenario
    from scenarios.base import SinkContext
    from scenarios.sources import FileDirectory

    paths = RunPaths(root)
    spec = RunSpec.load(paths.spec)
    sc = get_scenario(spec.scenario)
    if not isinstance(sc.source, FileDirectory):
        return {"error": f"scenario {sc.name} reads {sc.source.describe()}; an older PySpark runs file sources only"}
    t0 = time.monotonic()
    builder = SparkSession.builder.master("local[2]").appName(f"harness-old-{sc.name}")
    confs = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2", **spec.confs}
    for key, value in {**confs, **sc.confs, **spec.state_confs()}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        run = source_run(paths, spec, sc)
        site = FaultSite(paths.faults, paths.checkpoint)
        ctx = SinkContext(str(paths.output), str(paths.checkpoint), site, dict(run.resources))  # as the driver's
        stream = sc.source.stream(spark, run)
        writer = sc.attach_sink(sc.transform(stream).writeStream, ctx)
        query = (
            writer.option("checkpointLocation", str(paths.checkpoint))
            .trigger(availableNow=True)
            .queryName(f"harness_old_{sc.name}")
            .start()
        )
        query.awaitTermination()
        if query.exception() is not None:
            return {"error": str(query.exception()).splitlines()[0]}
        batches = sorted({int(p["batchId"]) for p in query.recentProgress})
    finally:
        spark.stop()
    return {"pyspark": pyspark.__version__, "batches": batches, "seconds": round(time.monotonic() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m harness.engine.old_spark RUN_DIR", file=sys.stderr)
        return 2
    try:
        report = _query_once(Path(args[0]))
    except Exception as exc:  # reported to the runner as one line; the traceback is in the log
        import traceback

        traceback.print_exc()
        report = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"}
    print(json.dumps(report), flush=True)
    return 1 if "error" in report else 0


if __name__ == "__main__":
    sys.exit(main())
