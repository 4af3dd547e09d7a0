"""``transformWithStateInPandas`` under real kills: the sessions scenario and its broken twin.

The twin differs from ``tws_sessions`` by one thing, where the open session is kept (a file of its own instead of
a ``ValueState``). The same run, with a SIGKILL after the ``foreachBatch`` sink committed batch 3 and before
Spark's ``commits/3``, holds for the scenario and is caught for the twin: Spark replays batch 3 from state
version 3, the side store has batch 3 in it already. (The ``ci`` campaign over ``tws_sessions``, drawing state
stores and checkpoint formats, is in test_chaos_library.py; the twin found, shrunk and replayed 3 times out of 3
by a campaign is the heavy test below.)

Cost: the runs share the session's driver pool (tests/integration/conftest.py); each is 7 batches, about 20-30 s here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from harness.engine.pool import DriverPool
from harness.engine.report import render_text, to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument
from tests.integration.clirun import harness, harness_json, leftover_processes


def run(pool: DriverPool, tmp_path: Path, name: str, *kills: str, **spec: Any) -> tuple[dict[str, Any], str]:
    """``name`` with seed 1, 2 rounds and the explicit ``kills``, in the shared pool: its JSON result and report."""
    rules = tuple(dataclasses.replace(parse_kill_argument(k), id=f"x{i + 1}") for i, k in enumerate(kills))
    log: list[str] = []
    stem = name.replace(":", "_")
    outcome = run_spec(
        RunSpec(name, 1, kills=0, rounds=2, extra_faults=rules, **spec), tmp_path / stem, log.append, pool=pool
    )
    return to_json(outcome), "\n".join([*log[-20:], render_text(outcome)])


def test_sessions_hold_and_the_side_store_twin_is_caught_after_the_same_kill(pool: DriverPool, tmp_path: Path) -> None:
    doc, log = run(pool, tmp_path, "tws_sessions", "sink.commit.after:3", state_store="rocksdb-changelog")
    assert doc["verdict"] == "exactly-once", log
    [fired] = doc["kills_fired"]
    assert (fired["point"], fired["batch"]) == ("sink.commit.after", 3), fired
    assert doc["expected_rows"] == doc["observed_rows"] > 100, log
    assert len(doc["batches"]) >= 6, "the kill should leave batches after the replay"
    # Spark's value, map and list state after the run (statestore reader) equal the oracle's open sessions.
    state = doc["final_state"]
    assert state["unreadable"] == {} and state["error"] is None and state["mismatches"] == 0, state
    assert set(state["variables"]) == {"0-session", "0-buckets", "0-recent"} and state["variables"]["0-session"] > 3

    twin, log = run(pool, tmp_path, "tws_sessions_side_store", "sink.commit.after:3", state_store="rocksdb-changelog")
    assert twin["verdict"] == "violated", log
    assert twin["expected_rows"] == doc["expected_rows"], "same input, same oracle"
    kinds = set(twin["anomaly_counts"])
    assert "wrong-value" in kinds and kinds <= {"wrong-value", "lost", "phantom"}, twin["anomaly_counts"]
    # A ``row`` record is emitted by the batch that read its row: every wrong one is in a batch after the replayed
    # batch 3, follows the kill, and the first of them over-count (the replayed rows counted twice). (A ``session``
    # record is located at its first row, which can be in an earlier batch than the one that ended the session.)
    rows = [a for a in twin["anomalies"] if (a["row"] or a["observed_row"])["kind"] == "row"]
    assert rows and all(a["kind"] == "wrong-value" and a["batch_id"] > 3 and a["fault"] for a in rows), log
    first = min(rows, key=lambda a: (a["batch_id"], a["row"]["offset"], a["row"]["seq"]))
    assert first["observed_row"]["rows"] > first["row"]["rows"], first
    assert (tmp_path / "tws_sessions_side_store" / "output" / "side-store").is_dir()


def test_state_a_timer_leaks_is_caught_by_the_final_state_check(pool: DriverPool, tmp_path: Path) -> None:
    """A processor whose timer ends a session but leaves its map and list state behind: the output shows it only
    for keys that come back; Spark's state shows it for every session a timer ended (no fault needed)."""
    doc, log = run(pool, tmp_path, "examples.pipelines.tws_leaky_timer:SCENARIO")
    assert doc["verdict"] == "violated" and doc["kills_fired"] == [], log
    leaked = [a for a in doc["anomalies"] if a["kind"] == "state-mismatch"]
    assert leaked and {a["row"]["_variable"] for a in leaked} == {"0-buckets", "0-recent"}, log  # never the session
    assert "in Spark's state but not expected" in log
    shown = {(a["row"] or a["observed_row"])["key"] for a in doc["anomalies"] if a["kind"] != "state-mismatch"}
    only_in_state = {a["row"]["key"] for a in leaked} - shown
    assert only_in_state, "some leaked keys never came back: only the state check can see those"
    assert doc["final_state"]["mismatches"] == len(leaked)


@pytest.mark.heavy  # about 4 minutes: a campaign until found, shrinking, then 3 replays
def test_side_store_twin_is_found_shrunk_and_replayed_three_times(tmp_path: Path) -> None:
    args = ("chaos", "tws_sessions_side_store", "--examples", "10", "--seed", "1", "--profile", "ci")
    rc, doc, log = harness_json(tmp_path / "chaos.json", *args, "--work-dir", str(tmp_path / "w"))
    assert rc == 1 and doc["verdict"] == "violated", log
    assert 1 <= len(doc["minimal_faults"]) <= 2, doc["minimal_faults"]
    assert "wrong-value" in doc["failure"]["anomaly_counts"], doc["failure"]
    rc, out, err = harness("replay", doc["bundle"], "--times", "3")
    assert rc == 1 and "reproduced 3/3 time(s)" in out, out + err[-2000:]
    assert leftover_processes() == []
