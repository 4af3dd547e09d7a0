"""The Spark Connect backend (``--remote local``): the same scenarios through a
loopback Connect server that dies with its driver at every planned SIGKILL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.clirun import harness, leftover_processes


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Any:
    yield
    assert leftover_processes() == [], "a Connect run left a server or driver behind"


def test_file_sink_survives_kills_through_a_connect_server(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    rc, out, err = harness(
        "run", "file_sink_stateless", "--seed", "7", "--kills", "2", "--remote", "local",
        "--run-dir", str(run_dir), "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert rc == 0, out + err[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["spec"]["master"] == "connect:local[2]"
    assert doc["verdict"] == "exactly-once" and len(doc["kills_fired"]) == 2
    assert doc["observed_rows"] == doc["expected_rows"] > 0
    history = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    assert sum(e["f"] == "crash" for e in history) == 2  # each kill took the client and its server down
    # A server per driver incarnation really served the queries (the driver logs say where): the first driver and
    # one per kill (the second a standby, started while the first worked; none is started after the last kill).
    driver_logs = sorted((run_dir / "logs").glob("driver-*.log"))
    logs = "".join(p.read_text(errors="replace") for p in driver_logs)
    assert len(driver_logs) == 3 and logs.count("harness: Spark Connect server (pid ") == 3, logs[-3000:]
    assert "master local[2]) listening on sc://127.0.0.1:" in logs
    assert out.splitlines()[-1].endswith("--master 'connect:local[2]'")  # quoted: pastes into zsh too


@pytest.mark.heavy  # the default suite's Connect case is the file-sink run above (kills, servers, exactly-once)
def test_naive_foreach_batch_is_caught_through_a_connect_server(tmp_path: Path) -> None:
    rc, out, err = harness(
        "run", "foreachbatch_append_naive", "--seed", "3", "--kills", "0", "--kill", "sink.commit.after:1",
        "--remote", "local", "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    assert rc == 1, out + err[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verdict"] == "violated"
    assert {a["kind"] for a in doc["anomalies"]} == {"duplicate"}
    assert {a["batch_id"] for a in doc["anomalies"]} == {1}


def test_an_external_connect_server_is_refused_in_one_line() -> None:
    rc, _, err = harness("run", "file_sink_stateless", "--remote", "sc://example.com:15002")
    assert rc == 2
    assert "only 'local' is supported" in err and "Traceback" not in err
