"""The standalone backend's pure parts: ``standalone:W`` parsing, the refusal of cluster faults without a cluster,
the executors' environment, and ``kill_worker``/``kill_master`` SIGKILLing the process group the cluster file
names (real processes and signals, no Spark)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings

from fault_injectors.kills import CLUSTER_FILE_ENV, InjectedFault, kill_cluster_daemon
from fault_injectors.plan import FaultRule
from harness.chaos.strategies import chaos_specs
from harness.engine.spec import RunSpec
from harness.spark.standalone import (
    ClusterError,
    StandaloneCluster,
    cluster_master,
    executor_env_confs,
    is_standalone,
    parse_standalone,
)
from scenarios import get_scenario


def test_standalone_masters_are_parsed_and_bad_ones_say_what_to_give() -> None:
    assert is_standalone("standalone:2") and parse_standalone("standalone:2") == 2
    for bad in ("standalone:0", "standalone:9", "standalone:x", "standalone:"):
        with pytest.raises(ValueError, match="give standalone:W with 1 to 8 workers"):
            parse_standalone(bad)
    assert (
        cluster_master(None, "local[2]") == "local[2]" and cluster_master("standalone:3", "local[2]") == "standalone:3"
    )
    with pytest.raises(ValueError, match="starts its own cluster; drop --master spark://h:7077"):
        cluster_master("standalone:2", "spark://h:7077")
    with pytest.raises(ValueError, match="give standalone:W"):
        RunSpec("file_sink_stateless", 1, master="standalone:0")


def test_cluster_faults_need_the_cluster_the_harness_starts() -> None:
    rule = FaultRule("w", "source.read", 1, 0, action="kill_worker")
    assert rule.describe() == "kill worker at source.read of batch 1, partition 0"
    for master in ("local[2]", "local-cluster[2,1,1024]", "spark://h:7077"):
        with pytest.raises(ValueError, match="needs the standalone cluster the harness starts"):
            RunSpec("file_sink_stateless", 1, kills=0, master=master, extra_faults=(rule,))
    RunSpec("file_sink_stateless", 1, kills=0, master="standalone:2", extra_faults=(rule,))


def test_executors_get_what_a_local_drivers_children_inherit() -> None:
    env = {"HARNESS_DRIVER_PGID": "12", "HARNESS_RUN_TOKEN": "t.1", "PYTHONPATH": "/a:/b", "PYSPARK_PYTHON": "/py",
           "HOME": "/root"}  # fmt: skip
    confs = executor_env_confs(env)
    assert confs == {
        "spark.executorEnv.HARNESS_DRIVER_PGID": "12",
        "spark.executorEnv.HARNESS_RUN_TOKEN": "t.1",
        "spark.executorEnv.PYTHONPATH": "/a:/b",
        "spark.executorEnv.PYSPARK_PYTHON": "/py",
    }


def _daemon() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)


def test_kill_worker_and_kill_master_sigkill_the_named_daemons_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InjectedFault, match="without a standalone cluster started by the harness"):
        kill_cluster_daemon("kill_worker", master=False)
    master, first, second = _daemon(), _daemon(), _daemon()
    try:
        doc = {"master": {"pid": master.pid}, "workers": [{"name": "worker-1", "pid": first.pid},
                                                          {"name": "worker-2", "pid": second.pid}]}  # fmt: skip
        (tmp_path / "cluster.json").write_text(json.dumps(doc))
        monkeypatch.setenv(CLUSTER_FILE_ENV, str(tmp_path / "cluster.json"))
        # Fired outside any worker (a driver-side point): the first worker.
        kill_cluster_daemon("kill_worker", master=False)
        assert first.wait(10) == -9 and second.poll() is None and master.poll() is None
        kill_cluster_daemon("kill_master", master=True)
        assert master.wait(10) == -9 and second.poll() is None
        kill_cluster_daemon("kill_worker", master=False)  # the named worker is already gone: nothing else is touched
        assert second.poll() is None
    finally:
        for proc in (master, first, second):
            proc.kill()
            proc.wait()


def _actions(master: str, n: int = 150) -> Counter[str]:
    scenario = get_scenario("file_sink_stateless")
    seen: Counter[str] = Counter()

    @settings(max_examples=n, database=None, derandomize=True, deadline=None)
    @given(chaos_specs(scenario, max_rounds=2, max_faults=3, hard_kill_ratio=0.2, master=master))
    def draw(spec: RunSpec) -> None:
        RunSpec.from_dict(json.loads(spec.to_json()))  # every drawn spec is valid for its master
        seen.update(r.action for r in spec.extra_faults)

    draw()
    return seen


def test_chaos_draws_daemon_kills_on_the_standalone_cluster_only() -> None:
    on_cluster, local = _actions("standalone:2"), _actions("local[2]")
    assert on_cluster["kill_worker"] > 0 and on_cluster["kill_master"] > 0, on_cluster
    assert on_cluster["raise"] > on_cluster["kill_worker"]  # a share of the soft faults, not all of them
    assert local["kill_worker"] == local["kill_master"] == 0 and local["raise"] > 0, local


FAKE_SPARK_CLASS = """#!/bin/sh
case "$1" in
  *Master) sleep 0.3; exit 3 ;;
  *Worker) echo "Successfully registered with master"; exec sleep 60 ;;
esac
"""


def test_a_daemon_that_keeps_exiting_is_given_up_on_and_close_leaves_nothing(tmp_path: Path) -> None:
    """The supervisor restarts a dead daemon, but not forever: a master that exits at every start (a fake
    ``spark-class``: real processes, no Spark) makes the cluster ``broken``, with the log to read."""
    home = tmp_path / "spark"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "spark-class").write_text(FAKE_SPARK_CLASS)
    (home / "bin" / "spark-class").chmod(0o755)
    env = {"SPARK_HOME": str(home), "PATH": "/usr/bin:/bin"}
    cluster = StandaloneCluster(2, tmp_path / "cluster", "unit-test-cluster", env)
    cluster.start()
    workers = [p for n, p in cluster.procs.items() if n != "master"]
    deadline = time.monotonic() + 30
    while cluster.broken is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert cluster.broken is not None and "master exited 6 times within 60 s; not restarting it" in cluster.broken
    assert [n for n, _ in cluster.restarts] == ["master"] * 5 and "master" not in cluster.procs
    cluster.close()
    assert all(p.poll() is not None for p in workers) and cluster.procs == {}
    cluster.close()  # idempotent
    with pytest.raises(ClusterError, match="master exited 6 times"):
        cluster.start()


def test_standalone_masters_given_as_master_are_checked_too() -> None:
    with pytest.raises(ValueError, match="give standalone:W"):
        cluster_master(None, "standalone:9")
    with pytest.raises(ValueError, match="not run through --remote"):
        cluster_master(None, "connect:standalone:2")
