"""The standalone backend (``--cluster standalone:W``): a real Spark master and workers started from the
installed Spark on loopback, the driver in client mode against them, daemons killed by faults and restarted by
the cluster's supervisor, everything torn down with the run (checked with ``ps``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.spark.procs import RUN_TOKEN_ENV
from harness.spark.session import spark_env
from harness.spark.standalone import StandaloneCluster
from tests.integration.clirun import TOKEN_PREFIX, harness_json, leftover_processes

DAEMONS = ("org.apache.spark.deploy.master.Master", "org.apache.spark.deploy.worker.Worker")


def cluster_processes(where: Path) -> list[str]:
    """``ps`` lines of a master, worker or executor of this test: its command line names ``where`` (a daemon's
    properties file) or its environment carries this session's run-token prefix (an executor)."""
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True).stdout.splitlines()
    kinds = (*DAEMONS, "CoarseGrainedExecutorBackend")

    def ours(line: str) -> bool:
        try:
            env = Path(f"/proc/{line.split()[0]}/environ").read_bytes()
        except OSError:
            return False
        return str(where) in line or f"{RUN_TOKEN_ENV}={TOKEN_PREFIX}".encode() in env

    return [line for line in ps if any(k in line for k in kinds) and ours(line)]


@pytest.fixture(autouse=True)
def nothing_left(tmp_path: Path) -> Any:
    yield
    assert cluster_processes(tmp_path) == [], "a master, worker or executor outlived the run"
    assert leftover_processes() == [], "a harness run left processes behind"


@pytest.mark.heavy  # CI time: the naive-sink test below is the default suite's standalone case
def test_file_sink_holds_under_driver_kills_a_worker_kill_and_a_master_kill(tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ("run", "file_sink_stateless", "--seed", "4", "--kills", "2", "--cluster", "standalone:2",
            "--kill", "source.read:1:0@kill_worker", "--kill", "after_offsets_logged:2@kill_master",
            "--run-dir", str(run))  # fmt: skip
    rc, doc, log = harness_json(tmp_path / "r.json", *args)
    assert rc == 0 and doc["verdict"] == "exactly-once", log
    actions = sorted(k["action"] for k in doc["kills_fired"])
    assert actions == ["kill_master", "kill_process_group", "kill_process_group", "kill_worker"], actions
    assert doc["spec"]["master"] == "standalone:2"
    cluster = run / "logs" / "cluster"
    restarted = "".join(p.read_text() for p in cluster.glob("*.log"))
    assert re.search(r"harness: worker-\d exited \(-9\); restarting it", restarted), "no worker was killed"
    assert "harness: master exited (-9); restarting it" in restarted
    master_log = (cluster / "master.log").read_text()
    assert "Telling app of lost worker" in master_log  # Spark saw the worker go; its tasks ran elsewhere
    assert len(list(run.glob("logs/driver-*.log"))) == 3  # driver kills restart the driver, daemon kills do not
    assert "replay: .venv/bin/python -m harness run file_sink_stateless --seed 4" in log and "standalone:2" in log


def test_naive_foreach_batch_is_caught_on_an_existing_standalone_cluster(tmp_path: Path) -> None:
    """``--master spark://HOST:PORT``: a cluster that was already running (started here, as an operator would)
    runs the query; the at-least-once sink is caught, and the driver's executors die with it."""
    # One worker: the other test kills a worker of two; here one executor JVM per driver is enough.
    cluster = StandaloneCluster(1, tmp_path / "cluster", TOKEN_PREFIX + "cluster", spark_env())
    try:
        cluster.start()
        args = ("run", "foreachbatch_append_naive", "--seed", "3", "--kills", "0", "--rounds", "1", "--kill",
                "sink.commit.after:0", "--master", cluster.url, "--run-dir", str(tmp_path / "run"))  # fmt: skip
        rc, doc, log = harness_json(tmp_path / "r.json", *args)
        assert rc == 1 and doc["verdict"] == "violated", log
        kinds = {a["kind"] for a in doc["anomalies"]}
        assert kinds == {"duplicate"} and {a["batch_id"] for a in doc["anomalies"]} == {0}, doc["anomaly_counts"]
        assert len(list((tmp_path / "run").glob("logs/driver-*.log"))) == 2
        executors = list((tmp_path / "cluster").glob("worker-*/app-*/*/stderr"))
        assert executors, "the batches ran on the cluster's executors"
        assert not [p for p in cluster_processes(tmp_path) if "CoarseGrainedExecutorBackend" in p]  # none left
        assert cluster.restarts == []  # no daemon was lost
    finally:
        cluster.close()
