"""Checkpoint nemesis against real Spark 4.3 checkpoints.

Each test runs the file-sink pipeline in process (real query, real checkpoint
on disk), stops it, damages the checkpoint, restarts the query from it and
asserts what Spark did: fail loudly, or stay exactly-once — or, where Spark
cannot know, the harness catches the silent damage. The expectations are what
we measured on PySpark 4.3.0 (docs/nemesis.md); a change in Spark's handling
makes the test fail and the table must be re-measured.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from fault_injectors.nemesis import NEMESES, apply_nemesis
from fault_injectors.plan import FaultPlan
from harness.engine.driver import Driver, QueryFailed
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.verdict.check import check_run_dir
from scenarios.tap import advance, init_tap
from tests.integration.clirun import harness_json, leftover_processes

#: nemesis -> (outcome, detail): "fails" with a message fragment, "exactly-once",
#: or "violated" with the anomaly kind the checker must report.
MEASURED: dict[str, tuple[str, str]] = {
    "truncate_latest_offsets": ("fails", "Unexpected end-of-input"),
    "empty_latest_offsets": ("fails", "Failed to read log"),
    "garbage_latest_offsets": ("fails", "Input length"),
    "empty_latest_commit": ("fails", "Failed to read log"),
    "delete_latest_commit": ("exactly-once", ""),
    "delete_middle_commit": ("exactly-once", ""),
    "remove_metadata": ("fails", "STREAMING_CHECKPOINT_MISSING_METADATA_FILE"),
    "flip_offset_stale_crc": ("violated", "duplicate"),
    "rollback_latest_offsets": ("violated", "duplicate"),
    # A fresh checkpoint at the same place: the new query's batch 0 re-reads everything, and the file sink skips
    # it as already committed (its own log, `_spark_metadata`, in the output directory, still says batch 1).
    "reset_checkpoint": ("violated", "lost"),
}


def test_every_nemesis_has_a_measured_expectation() -> None:
    assert set(MEASURED) == set(NEMESES)


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_nemesis(spark: SparkSession, tmp_path: Path, name: str) -> None:
    paths = RunPaths(tmp_path / "run")
    paths.create()
    RunSpec("file_sink_stateless", seed=11, kills=0).save(paths.spec)
    FaultPlan().save(paths.faults / "plan.json")
    init_tap(paths.tap, 2)
    driver = Driver(paths, 1, spark=spark)
    for rows in ({0: 50, 1: 35}, {0: 30, 1: 45}):
        advance(paths.tap, rows)
        driver.run()
    damage = apply_nemesis(name, paths.checkpoint)
    advance(paths.tap, {0: 10, 1: 10})
    outcome, detail = MEASURED[name]
    if outcome == "fails":
        with pytest.raises(QueryFailed, match=detail):
            driver.run()
        return
    driver.run()
    driver.check()
    result = check_run_dir(paths.oracle, paths.checkpoint)
    assert result.verdict == outcome, f"{damage}: {result.counts()}"
    if outcome == "violated":
        # The checkpoint itself may also show offset-regression, when the lowered offset falls below
        # the previous batch's end (depends on which digit was lowered).
        assert detail in result.counts(), f"{damage}: {result.counts()}"
        assert set(result.counts()) <= {detail, "offset-regression"}, f"{damage}: {result.counts()}"
        assert all(a.batch_id is not None for a in result.anomalies)


# heavy: every nemesis action runs in test_nemesis above; --nemesis parsing: tests/unit/test_report_and_cli.py
@pytest.mark.heavy
def test_nemesis_through_the_cli_names_the_damage(tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "run",
        "file_sink_stateless",
        "--seed",
        "2",
        "--kills",
        "0",
        "--rounds",
        "2",
        "--nemesis",
        "remove_metadata",
    )
    assert rc == 2, log
    assert doc["query_failed"] is True and doc["verdict"] == "unknown"
    assert "STREAMING_CHECKPOINT_MISSING_METADATA_FILE" in doc["error"]
    assert log.startswith("query failed loudly, no verdict (scenario=file_sink_stateless, seed=2)")
    [nemesis] = doc["kills_fired"]
    assert nemesis["action"] == "nemesis" and "checkpoint/metadata" in nemesis["description"]
    assert "[metadata-missing]" in doc["inspector"], doc["inspector"]
    assert leftover_processes() == []
