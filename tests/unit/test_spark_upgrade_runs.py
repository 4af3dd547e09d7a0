"""Spark upgrade runs' pure parts (issue 29 point 4): which rounds the older PySpark runs, where the schedule may
aim faults, which scenarios it can run, how its process is set up and its failures reported."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from fault_injectors.plan import FaultRule
from harness.engine.old_spark import OldSparkError, old_env, run_round
from harness.engine.rundir import RunPaths
from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec
from scenarios import get_scenario

AGG = "scenarios.library.file_source_agg:SCENARIO"
OLD = "/opt/pyspark-3.5/bin/python"


def test_the_older_pyspark_runs_the_first_rounds_and_leaves_one_to_the_project() -> None:
    with pytest.raises(ValueError, match=r"old_rounds 3: the older PySpark runs rounds 1\.\.K with K < rounds \(3\)"):
        RunSpec(AGG, 1, kills=1, rounds=3, old_pyspark=OLD, old_rounds=3)
    with pytest.raises(ValueError, match="one change a run"):
        RunSpec(AGG, 1, rounds=3, old_pyspark=OLD, upgrade_to="file_source_agg")
    spec = RunSpec(AGG, 1, kills=1, rounds=3, old_pyspark=OLD, old_rounds=2)
    assert RunSpec.from_dict(__import__("json").loads(spec.to_json())) == spec
    assert spec.replay_args()[-4:] == ["--old-pyspark", OLD, "--old-rounds", "2"]


@pytest.mark.parametrize("seed", range(12))
def test_seeded_kills_aim_only_at_batches_of_the_project_pyspark(seed: int) -> None:
    spec = RunSpec(AGG, seed, kills=3, rounds=5, old_pyspark=OLD, old_rounds=2)
    schedule = build_schedule(spec, get_scenario(AGG))
    # Spark's file source runs one batch a round: batches 0 and 1 are the older PySpark's.
    assert sorted(r.batch for r in schedule.plan.rules) == [2, 3, 4]


def test_more_kills_than_batches_left_after_the_older_pyspark_are_refused() -> None:
    with pytest.raises(ValueError, match=r"3 kills need as many batches but the schedule has 2 after the older"):
        build_schedule(RunSpec(AGG, 1, kills=3, rounds=4, old_pyspark=OLD, old_rounds=2), get_scenario(AGG))


def test_a_fault_aimed_at_a_batch_of_the_older_pyspark_is_refused() -> None:
    early = FaultRule("x1", "after_commit_logged", 1)
    spec = RunSpec(AGG, 1, kills=0, rounds=4, extra_faults=(early,), old_pyspark=OLD, old_rounds=2)
    with pytest.raises(ValueError, match=r"fault\(s\) x1 aim at batches the older PySpark runs \(0\.\.1\)"):
        build_schedule(spec, get_scenario(AGG))


def test_only_a_file_directory_source_runs_on_an_older_pyspark() -> None:
    spec = RunSpec("agg_watermark_append", 1, kills=1, rounds=3, old_pyspark=OLD)
    with pytest.raises(ValueError, match=r"an older PySpark runs Spark's own file source only"):
        build_schedule(spec, get_scenario("agg_watermark_append"))


def test_the_older_pyspark_gets_its_own_python_and_none_of_the_project_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_HOME", "/work/.venv/lib/pyspark")
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--jars /x.jar pyspark-shell")
    env = old_env(OLD)
    assert "SPARK_HOME" not in env and "PYSPARK_SUBMIT_ARGS" not in env
    assert env["PYSPARK_PYTHON"] == env["PYSPARK_DRIVER_PYTHON"] == OLD
    assert Path(env["PYTHONPATH"].split(":")[0], "harness", "engine", "old_spark.py").is_file()


def test_a_missing_older_pyspark_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(OldSparkError, match=r"not an executable Python; build the older PySparks with bin/test-spark"):
        run_round(RunPaths(tmp_path), str(tmp_path / "nope" / "python"), 1)


def test_a_failing_older_pyspark_round_names_its_log(tmp_path: Path) -> None:
    """This Python has no run directory to read: the round fails with the error line and where the log is."""
    paths = RunPaths(tmp_path / "run")
    with pytest.raises(OldSparkError, match=r"round 1: the older PySpark .* failed: .*; its log: .*old-spark-1\.log"):
        run_round(paths, sys.executable, 1)
    assert (paths.logs / "old-spark-1.log").read_text().strip()


def test_a_round_whose_older_pyspark_leaves_its_jvm_behind_returns_when_it_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The older PySpark's Python reports and exits, leaving a child that holds its stdout (as an orphaned JVM
    does): the round returns the report, and the child is killed with the round's process group. (Reading a
    pipe to its end waited for the child: the round ran past its timeout and failed.)"""
    import harness.engine.old_spark as old_spark

    monkeypatch.setattr(old_spark, "ROUND_TIMEOUT_S", 20.0)
    fake = tmp_path / "python"
    left = tmp_path / "left.pid"
    fake.write_text(f'#!/bin/sh\nsleep 600 &\necho $! > {left}\necho \'{{"pyspark": "3.5.9", "batches": [0]}}\'\n')
    fake.chmod(0o755)
    report = run_round(RunPaths(tmp_path / "run"), str(fake), 1)
    assert report == {"pyspark": "3.5.9", "batches": [0]}
    pid = int(left.read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid), "the child outlived its round"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return "Z"
