"""Start-up trims of the harness's SparkSessions, checked in the real JVM and workers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyspark import SparkContext
from pyspark.sql import SparkSession

from harness.spark.cds import CDS_ENV, archive_path
from harness.spark.session import DEFAULT_CONFS


def test_spark_python_workers_import_the_installed_pyspark_not_its_zip(spark: SparkSession) -> None:
    """The ``sitecustomize`` on PYTHONPATH (harness/spark/sitepath) reaches the Python workers Spark
    starts: they import pyspark from the installed package, whose bytecode is cached."""
    import pyspark
    from pyspark.sql.functions import udf

    @udf("string")
    def pyspark_file(_: int) -> str:
        import pyspark as worker_pyspark

        return str(worker_pyspark.__file__)

    seen = {r[0] for r in spark.range(2).select(pyspark_file("id")).collect()}
    assert seen == {pyspark.__file__}, f"workers imported pyspark from {seen}, expected {pyspark.__file__}"
    assert ".zip" not in pyspark.__file__


def test_spark_forks_python_workers_from_the_warm_daemon(spark: SparkSession) -> None:
    """A local session's workers come from harness/spark/daemon.py: their parent runs that module, and pyarrow is
    imported before the task's code runs (a plain Python UDF does not import it; Spark's own daemon would not)."""
    from pyspark.sql.functions import udf

    @udf("string")
    def worker_origin(_: int) -> str:
        import os
        import sys

        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            parent = f.read().replace(b"\0", b" ").decode()
        return f"{'pyarrow' in sys.modules}|{parent}"

    seen = {r[0] for r in spark.range(2).select(worker_origin("id")).collect()}
    assert spark.conf.get("spark.python.daemon.module") == "harness.spark.daemon"
    for origin in seen:
        preloaded, parent = origin.split("|", 1)
        assert "-m harness.spark.daemon" in parent, f"worker forked by {parent!r}, not the warm daemon"
        assert preloaded == "True", "pyarrow was not imported before the worker ran the task"


def test_a_take_over_kills_the_warm_daemons_reused_workers(spark: SparkSession) -> None:
    """What a spare does when it takes over a hosted JVM (harness/spark/attach.py): the reused workers forked by
    the session's daemon die, and the next tasks run in new ones."""
    from pyspark.sql.functions import udf

    from harness.spark.attach import _kill_python_workers

    @udf("int")
    def worker_pid(_: int) -> int:
        import os

        return os.getpid()

    before = {r[0] for r in spark.range(4).select(worker_pid("id")).collect()}
    jvm_pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())  # type: ignore[union-attr]
    daemon = spark.conf.get("spark.python.daemon.module")
    assert daemon is not None
    killed = _kill_python_workers(jvm_pid, daemon)
    assert before <= set(killed), f"workers {before} ran the tasks; the take-over killed {killed}"
    after = {r[0] for r in spark.range(4).select(worker_pid("id")).collect()}
    assert not before & after, "a worker of the dead driver's era ran a task after the take-over"


def test_the_driver_jvm_maps_the_class_data_archive(spark: SparkSession) -> None:
    """bin/test builds the archive at set-up (harness/spark/cds.py); the session's JVM must map it."""
    if os.environ.get(CDS_ENV) == "0":
        pytest.skip(f"{CDS_ENV}=0 turns the archive off")
    archive = archive_path(DEFAULT_CONFS["spark.driver.extraJavaOptions"])
    if archive is None or not archive.is_file():
        message = f"no class-data archive at {archive}; `harness setup` builds it"
        if os.environ.get("HARNESS_REQUIRE_CDS") == "1":  # bin/test: set-up built it, or says why it could not
            pytest.fail(message)
        pytest.skip(message)
    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is None:
        pytest.skip("this session's JVM was not started by this process")
    assert str(archive) in spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "")
    maps = Path(f"/proc/{proc.pid}/maps").read_text()
    assert str(archive) in maps, f"JVM {proc.pid} runs without {archive}: the archive did not load"
