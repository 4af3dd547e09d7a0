"""Task-level faults through Spark's own retry path, and permanent failures."""

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


def plan(tmp_path: Path, **rule: Any) -> str:
    path = tmp_path / "plan.json"
    path.write_text(
        json.dumps(
            {
                "rules": [
                    {
                        "id": "t1",
                        "point": "sink.write.mid",
                        "batch": 1,
                        "partition": 0,
                        "after_rows": 3,
                        "action": "raise",
                        **rule,
                    }
                ]
            }
        )
    )
    return str(path)


def history(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(doc["history"]).read_text().splitlines()]


def test_failed_task_attempt_is_retried_by_spark(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "run",
        "file_sink_stateless",
        "--seed",
        "4",
        "--rounds",
        "1",
        "--master",
        "local[2,2]",
        "--fault-plan",
        plan(tmp_path, attempt=0),
        "--run-dir",
        str(tmp_path / "run"),
    )
    assert rc == 0, log
    [fired] = doc["kills_fired"]
    assert (fired["id"], fired["action"], fired["batch"]) == ("t1", "raise", 1)
    assert fired["context"]["attempt"] == 0 and fired["context"]["partition"] == 0
    events = history(doc)
    assert not [e for e in events if e["type"] == "fail"], "Spark's task retry should hide the failure from the query"
    assert doc["verdict"] == "exactly-once"


def test_fault_on_every_attempt_fails_the_query_until_it_is_spent(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "run",
        "file_sink_stateless",
        "--seed",
        "4",
        "--rounds",
        "1",
        "--fault-plan",
        plan(tmp_path, times=2),
        "--run-dir",
        str(tmp_path / "run"),
    )
    assert rc == 0, log
    assert [k["id"] for k in doc["kills_fired"]] == ["t1", "t1"]
    fails = [e for e in history(doc) if e["type"] == "fail" and e["f"] == "run"]
    assert len(fails) == 2 and all(e["value"]["soft_fault"] for e in fails)
    assert "injected fault t1" in fails[0]["value"]["message"]
    assert doc["verdict"] == "exactly-once"


# heavy: a fault on every attempt failing the query is test_fault_on_every_attempt_...
@pytest.mark.heavy
def test_permanent_fault_is_reported_not_looped_forever(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "run",
        "file_sink_stateless",
        "--seed",
        "4",
        "--rounds",
        "1",
        "--fault-plan",
        plan(tmp_path, times=None),
    )
    assert rc == 2, log
    assert doc["verdict"] == "unknown"
    assert "did not complete after" in doc["error"] and "times=null" in doc["error"]
    assert len(doc["kills_fired"]) >= 3
