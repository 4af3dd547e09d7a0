"""harness/spark/daemon.py: which masters get the warm worker daemon, and what it imports before it forks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.spark.daemon import DAEMON_CONF, PRELOADED, daemon_confs


@pytest.mark.parametrize("master", ["local", "local[2]", "local[*]", "local[2,3]"])
def test_a_local_master_gets_the_warm_daemon(master: str) -> None:
    assert daemon_confs(master) == {DAEMON_CONF: "harness.spark.daemon"}


@pytest.mark.parametrize("master", ["local-cluster[2,1,1024]", "spark://127.0.0.1:7077", "yarn", "k8s://h:443"])
def test_a_cluster_keeps_sparks_daemon(master: str) -> None:
    """Executors of a cluster may run a Python without the harness: Spark's own daemon there."""
    assert daemon_confs(master) == {}


def test_preload_imports_the_libraries_and_runs_no_daemon() -> None:
    """In a fresh interpreter: every preloaded module imports (this environment has them all), and importing
    the module starts nothing (the daemon runs only as ``python -m``)."""
    code = (
        "import json, sys; from harness.spark.daemon import preload, PRELOADED; "
        "before = [m for m in PRELOADED if m in sys.modules]; missing = preload(); "
        "print(json.dumps([before, missing, [m for m in PRELOADED if m not in sys.modules]]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    before, missing, absent = json.loads(out.stdout)
    assert "pyarrow" not in before and "pandas" not in before
    assert missing == [] and absent == []
    assert {"pyarrow", "pandas", "pyspark.worker"} <= set(PRELOADED)
