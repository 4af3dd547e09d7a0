"""``check-source`` without a context on sources whose data arrives by itself, under a real SIGKILL in batch 3:
the rate-like source (correct) conforms; its twin that counts from zero in every new process is caught by
``latest-offset-behind-checkpoint``, which names both offsets; its ``latest-offset-stable`` stays a note that
points at the failing checks (a habit is never a second reason for a failure)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.integration.clirun import harness_json, leftover_processes

EX = "examples/connectors"


def by_id(doc: dict) -> dict[str, dict]:
    return {c["id"]: c for c in doc["checks"]}


@pytest.mark.heavy  # CI time: the example table runs per_call_counter and clock_ticks the same way
def test_rate_like_source_conforms_with_a_kill_three_batches_in(tmp_path: Path) -> None:
    start = time.time_ns() // 1_000_000 - 3000
    rc, doc, log = harness_json(
        tmp_path / "r.json", "check-source", f"{EX}/rate_like_source.py:RateLikeSource", "--option", f"startMs={start}"
    )
    assert rc == 0, log
    checks = by_id(doc)
    assert checks["admission-control"]["status"] == "skip" and checks["latest-offset-stable"]["status"] != "fail"
    e2e = checks["end-to-end"]
    assert e2e["status"] == "pass" and "after_offsets_logged (batch 3)" in e2e["summary"], e2e
    behind = checks["latest-offset-behind-checkpoint"]
    assert behind["status"] == "pass", behind
    assert int(behind["summary"].split("all ")[1].split()[0]) >= 4  # at least 4 batches logged
    assert leftover_processes() == []


@pytest.mark.heavy  # CI time: the example table's per_call_counter_from_zero fails behind-checkpoint too
def test_counting_from_zero_in_each_process_is_caught_behind_the_checkpoint(tmp_path: Path) -> None:
    rc, doc, log = harness_json(tmp_path / "r.json", "check-source", f"{EX}/counts_from_zero.py:CountsFromZeroSource")
    assert rc == 1, log
    checks = by_id(doc)
    behind = checks["latest-offset-behind-checkpoint"]
    assert behind["status"] == "fail", log
    assert any('batch 4 ends at {"rows": 10}, behind batch 3\'s end {"rows": 40}' in d for d in behind["details"]), (
        behind
    )
    assert checks["latest-offset-stable"]["status"] == "note"
    assert "latest-offset-behind-checkpoint failed" in checks["latest-offset-stable"]["summary"]
    assert checks["latest-offset-monotonic"]["status"] == "pass"  # one process: the Spark-free story cannot see it
    assert leftover_processes() == []
