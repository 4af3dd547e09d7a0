"""``check-source`` and ``check-sink`` run like a user runs them: exit codes 0 / 1 / 2,
the JSON report, the failing check named, and no process left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.clirun import harness, harness_json, leftover_processes

EX = "examples/connectors"


def by_id(doc: dict) -> dict[str, dict]:
    return {c["id"]: c for c in doc["checks"]}


def test_check_source_reference_conforms_without_spark_checks(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "check-source",
        "scenarios/replayable_source.py:ReplayableDataSource",
        "--context",
        "harness/sources/contexts.py:replayable_context",
        "--skip",
        "end-to-end",
    )
    assert rc == 0, log
    assert doc["conforming"] and by_id(doc)["admission-control"]["status"] == "pass"
    assert log.splitlines()[0].startswith("source conforms")


@pytest.mark.heavy  # heavy: test_xdist_suite.py runs the same source's kit end to end
def test_check_source_overlapping_partitions_fails_also_end_to_end(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "check-source",
        f"{EX}/overlapping_partitions.py:OverlappingPartitionsSource",
        "--context",
        f"{EX}/_jsonl.py:log_context",
        "--kills",
        "1",
    )
    assert rc == 1, log
    checks = by_id(doc)
    assert checks["ranges-contiguous"]["status"] == "fail"
    e2e = checks["end-to-end"]
    assert e2e["status"] == "fail", log
    assert e2e["observed"] == ["duplicate"] and "after_offsets_logged" in e2e["summary"]
    assert "ranges-contiguous" in log.splitlines()[0]
    assert leftover_processes() == []


def test_check_source_bad_input_exits_2() -> None:
    rc, _out, err = harness("check-source", f"{EX}/jsonl_source.py:NoSuchClass")
    assert rc == 2 and err.strip().splitlines() == [
        "harness: source 'examples/connectors/jsonl_source.py:NoSuchClass': module "
        "'examples.connectors.jsonl_source' has no attribute 'NoSuchClass'"
    ]


def test_check_sink_publish_in_write_duplicates_at_a_real_kill(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "check-sink",
        f"{EX}/publish_in_write_sink.py:PublishInWriteSink",
        "--read-back",
        f"{EX}/publish_in_write_sink.py:read_back",
        "--faults",
        "hard",
        "--points",
        "sink.commit.after",
        "--skip",
        "crash-anywhere",
    )
    assert rc == 1, log
    checks = by_id(doc)
    assert checks["write-invisible-until-commit"]["status"] == "fail"
    crash = checks["crash-points"]
    assert crash["status"] == "fail" and crash["observed"] == ["duplicate"], log
    assert crash["details"][0].startswith("sink.commit.after (kill, batch 0): ") and "duplicate" in crash["details"][0]
    assert doc["guarantee"]["measured"] == "at-least-once" and doc["guarantee"]["declared"] == "exactly-once"
    assert leftover_processes() == []


def test_check_sink_attempt_keyed_fails_keys_on_batch_id(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "check-sink",
        f"{EX}/attempt_keyed_sink.py:AttemptKeyedSink",
        "--read-back",
        f"{EX}/attempt_keyed_sink.py:read_back",
        "--skip",
        "crash-points,crash-anywhere",
    )
    assert rc == 1, log
    failed = [c["id"] for c in doc["checks"] if c["status"] == "fail"]
    assert failed == ["keys-on-batch-id", "declared-guarantee"]
    assert doc["guarantee"]["measured"] == "at-most-once"


@pytest.mark.heavy  # heavy: test_conformance_readme.py checks a correct sink end to end
def test_check_sink_foreach_batch_factory_conforms(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "check-sink",
        "scenarios/sinks/sqlite_upsert.py:upsert_into_sqlite",
        "--read-back",
        "scenarios/sinks/sqlite_upsert.py:read_sqlite",
        "--skip",
        "crash-points",
        "--faults",
        "soft",
        "--steps",
        "3",
    )
    assert rc == 0, log
    checks = by_id(doc)
    assert checks["idempotent-commit"]["status"] == checks["abort-cleans-up"]["status"] == "pass"
    # the reference upsert stays exactly-once after a seeded sample of its steps (one transaction per batch)
    assert checks["crash-anywhere"]["status"] == "pass" and len(doc["steps"]["steps_tried"]) == 3, log
    assert checks["keys-on-batch-id"]["status"] == "skip"
    assert leftover_processes() == []


def test_check_sink_bad_read_back_exits_2() -> None:
    rc, _out, err = harness("check-sink", f"{EX}/attempt_keyed_sink.py:AttemptKeyedSink", "--read-back", "nope.py:f")
    assert rc == 2 and "--read-back 'nope.py:f'" in err and "does not exist" in err
