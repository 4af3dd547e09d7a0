"""The Delta upsert reference sink under ``check-sink``, run as a user runs it (the CLI, in a subprocess).

- ``delta_upsert`` (MERGE keyed by provenance, Delta's session txn confs) conforms. The default suite SIGKILLs
  the driver at ``sink.commit.after`` (the merge committed, ``commits/N`` not written: Spark replays a batch the
  table has, Delta skips the merge, the function runs the batch's plan into ``noop``); the heavy tier SIGKILLs
  at every crash point and after every effect boundary of the function's own code (``--faults hard --steps
  all``: 9 points, 11 boundaries, about 5 min on 2 cores).
- Its broken twin ``delta_append_naive`` (a plain append) fails: the batch replayed after ``sink.commit.after``
  is appended again, and the report names that kill with the batch's 20 rows duplicated.

Measured figures: ``docs/reference-sinks.md``, "Delta upsert".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.clirun import harness_json, leftover_processes

CODE = "scenarios/sinks/delta_upsert.py"
#: The protocol checks a foreachBatch factory cannot take (the kit skips them with the reason).
NOT_FOR_FOREACH_BATCH = {"write-invisible-until-commit", "keys-on-batch-id", "task-retry"}


def check_sink(tmp_path: Path, factory: str, *args: str) -> tuple[int, dict[str, Any], str]:
    sink, read_back = f"{CODE}:{factory}", f"{CODE}:read_back"
    return harness_json(tmp_path / "r.json", "check-sink", sink, "--read-back", read_back, *args)


def statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in doc["checks"]}


def by_id(doc: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in doc["checks"] if c["id"] == cid)


def assert_conforms(rc: int, doc: dict[str, Any], log: str, *, anywhere: str) -> None:
    assert rc == 0, log
    want = {cid: "skip" for cid in NOT_FOR_FOREACH_BATCH}
    want |= {"idempotent-commit": "pass", "abort-cleans-up": "pass", "crash-points": "pass"}
    want |= {"crash-anywhere": anywhere, "declared-guarantee": "pass"}
    assert statuses(doc) == want, log
    details = by_id(doc, "crash-points")["details"]
    fired = [d for d in details if not d.startswith("run directory")]
    assert fired and all(d.endswith("nothing lost or duplicated") for d in fired), details
    assert doc["guarantee"]["measured"] == "exactly-once"
    assert leftover_processes() == []


@pytest.mark.heavy  # CI time (~70 s); the default Delta cases: test_delta_scenarios.py's MERGE pair and sink
def test_delta_upsert_conforms_under_a_sigkill_before_commits_n(tmp_path: Path) -> None:
    rc, doc, log = check_sink(
        tmp_path, "delta_upsert", "--faults", "hard", "--points", "sink.commit.after", "--skip", "crash-anywhere"
    )
    assert_conforms(rc, doc, log, anywhere="skip")
    details = by_id(doc, "crash-points")["details"]
    assert details[0] == "sink.commit.after (kill, batch 0): nothing lost or duplicated", details


@pytest.mark.heavy  # about 5 min on 2 cores: 20 driver restarts
def test_delta_upsert_conforms_under_a_sigkill_at_every_point_and_every_step(tmp_path: Path) -> None:
    rc, doc, log = check_sink(tmp_path, "delta_upsert", "--faults", "hard", "--steps", "all")
    assert_conforms(rc, doc, log, anywhere="pass")
    assert len(by_id(doc, "crash-points")["details"]) == 9 + 1, log  # one line per point, then the run directory
    steps = doc["steps"]
    assert steps["boundaries"] == len(steps["steps_tried"]) == 11 and steps["census_steps"] == 13, steps
    merge = "-> delta.tables.DeltaMergeBuilder.execute"
    assert any("delta_upsert.py:" in t and merge in t for t in steps["steps_tried"]), steps


@pytest.mark.heavy  # 31 s; the default suite's Delta twin caught is test_delta_scenarios.py's MERGE pair
def test_naive_delta_append_duplicates_the_replayed_batch(tmp_path: Path) -> None:
    rc, doc, log = check_sink(
        tmp_path, "delta_append_naive", "--points", "sink.commit.after", "--skip", "crash-anywhere"
    )
    assert rc == 1, log
    got = statuses(doc)
    assert (got["idempotent-commit"], got["crash-points"], got["declared-guarantee"]) == ("fail", "fail", "fail"), log
    crash = by_id(doc, "crash-points")
    assert crash["observed"] == ["duplicate"] and crash["details"][0] == (
        "sink.commit.after (kill, batch 0): 20 duplicate"
    ), crash
    assert doc["guarantee"]["measured"] == "at-least-once"
    assert leftover_processes() == []
