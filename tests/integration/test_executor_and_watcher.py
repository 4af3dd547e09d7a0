"""Executor JVM kills on local-cluster, and crash points reached by the checkpoint watcher."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.clirun import harness_json, leftover_processes


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Any:
    yield
    assert leftover_processes() == [], "a harness run left processes behind"


def test_killed_executor_is_replaced_and_output_stays_exact(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "rules": [
                    {
                        "id": "e1",
                        "point": "sink.write.mid",
                        "batch": 1,
                        "partition": 0,
                        "after_rows": 3,
                        "action": "kill_executor",
                    }
                ]
            }
        )
    )
    run_dir = tmp_path / "run"
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "run",
        "file_sink_stateless",
        "--seed",
        "4",
        "--rounds",
        "1",
        "--master",
        "local-cluster[2,1,1024]",
        "--fault-plan",
        str(plan),
        "--run-dir",
        str(run_dir),
    )
    assert rc == 0, log
    [fired] = doc["kills_fired"]
    assert (fired["id"], fired["action"], fired["batch"]) == ("e1", "kill_executor", 1)
    driver_log = (run_dir / "logs" / "driver-1.log").read_text()
    assert "Lost executor" in driver_log and "exited with code 137" in driver_log  # 128 + SIGKILL
    assert not (run_dir / "logs" / "driver-2.log").exists(), "the driver itself must survive an executor kill"
    assert doc["verdict"] == "exactly-once"


@pytest.mark.heavy  # the watcher's other points: test_sources.py (file source), test_kafka_scenarios.py
def test_file_sink_commit_point_is_reached_by_the_checkpoint_watcher(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "run",
        "file_sink_stateless",
        "--seed",
        "6",
        "--rounds",
        "2",
        "--kill",
        "sink.commit.after:2",
        "--kill",
        "after_commit_logged:0",
    )
    assert rc == 0, log
    by_point = {k["point"]: k for k in doc["kills_fired"]}
    watcher = by_point["sink.commit.after"]
    assert watcher["context"]["via"] == "checkpoint-watcher"
    assert watcher["context"]["offsets_logged"] is True
    assert by_point["after_commit_logged"]["context"]["commit_logged"] is True
    assert doc["verdict"] == "exactly-once"
