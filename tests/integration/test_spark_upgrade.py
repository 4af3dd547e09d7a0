"""Spark upgrades (issue 29 point 4): a checkpoint written by an older PySpark (3.5, 4.0, each from PyPI in its own
virtual environment) with stateful operators on the HDFS and RocksDB state stores, resumed by the project's
PySpark under SIGKILLs, judged exactly-once over all the input.

The older PySparks come from ``bin/test-spark-upgrade`` (all of them, every operator and store: heavy) and
``bin/test`` (3.5 only, for the default suite's one case), which export ``HARNESS_OLD_SPARK_PYTHONS``
(``version=python ...``). Each case also asserts that the oracle could have failed: some group of the output
(a window, a dedup key, a joined pair) holds rows from both sides of the upgrade, so state written by the older
Spark had to be read by the newer one for the verdict to hold."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from harness.engine.pool import DriverPool
from harness.engine.report import render_text, to_json
from harness.engine.runner import run_spec
from harness.engine.spec import STATE_STORES, RunSpec
from harness.verdict.check import batch_spans
from tests.ci_skips import missing

OLD_ENV = "HARNESS_OLD_SPARK_PYTHONS"
MODULE = "scenarios.library.file_source_agg"
#: Operator -> the scenario over Spark's file source, and how to name a group of its output from input rows.
OPERATORS = {"aggregation": f"{MODULE}:SCENARIO", "dedup": f"{MODULE}:DEDUP", "join": f"{MODULE}:JOIN"}


def old_pythons() -> dict[str, str]:
    """``version -> python`` of the older PySparks the test command built."""
    pairs = (item.partition("=") for item in os.environ.get(OLD_ENV, "").split())
    return {version: python for version, _, python in pairs if python}


def old_python(version_prefix: str) -> str:
    found = [python for version, python in old_pythons().items() if version.startswith(version_prefix)]
    if not found:
        pytest.skip(missing(f"no PySpark {version_prefix} environment: bin/test-spark-upgrade builds them ({OLD_ENV})"))
    return found[0]


def _input_rows(run_dir: Path) -> list[dict[str, Any]]:
    """Every published input row, its ``event_time`` as epoch seconds."""
    rows = []
    for path in sorted((run_dir / "input").glob("p*.json")):
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                row["t"] = datetime.fromisoformat(row["event_time"]).timestamp()
                rows.append(row)
    return rows


def straddling_groups(run_dir: Path, operator: str, first_new_batch: int) -> int:
    """Groups of the output fed by rows of both sides of the upgrade: a 10-s window and key (aggregation), a dedup
    key seen again after it (dedup), or a pair with one row on each side (join: same key, within 5 s)."""
    boundary = next(s.start for s in batch_spans(run_dir / "checkpoint") if s.batch_id == first_new_batch)
    rows = _input_rows(run_dir)
    for row in rows:
        row["new"] = row["offset"] >= boundary.get(row["partition"], 0)
    if operator == "join":
        left = [r for r in rows if r["partition"] == 0]
        right = [r for r in rows if r["partition"] == 1]
        return sum(
            1
            for a in left
            for b in right
            if a["key"] == b["key"] and abs(a["t"] - b["t"]) <= 5 and a["new"] != b["new"]
        )
    sides: dict[tuple[Any, ...], set[bool]] = {}
    for row in rows:
        slot = int(row["t"] // 10)
        key = (row["key"], slot) if operator == "aggregation" else (row["key"], row["value"] % 3, slot)
        sides.setdefault(key, set()).add(row["new"])
    return sum(1 for seen in sides.values() if seen == {False, True})


def spark_upgrade(
    pool: DriverPool, run_dir: Path, version: str, operator: str, store: str, seed: int = 5
) -> tuple[dict[str, Any], str]:
    """Rounds 1-2 on the older PySpark, rounds 3-5 on this one with two SIGKILLs: the run's JSON and its report."""
    log: list[str] = []
    spec = RunSpec(
        OPERATORS[operator], seed, kills=2, rounds=5, state_store=store, old_pyspark=old_python(version), old_rounds=2
    )
    outcome = run_spec(spec, run_dir=run_dir, echo=log.append, pool=pool)
    return to_json(outcome), render_text(outcome) + "\n" + "\n".join(log[-40:])


def play(pool: DriverPool, run_dir: Path, version: str, operator: str, store: str) -> dict[str, Any]:
    doc, text = spark_upgrade(pool, run_dir, version, operator, store)
    assert doc["verdict"] == "exactly-once", text
    upgrade = [k for k in doc["kills_fired"] if k["point"] == "spark-upgrade"]
    assert len(upgrade) == 1 and upgrade[0]["context"]["from"].startswith(version), text
    killed_after = [
        k for k in doc["kills_fired"] if k["batch"] >= upgrade[0]["batch"] and k["point"] != "spark-upgrade"
    ]
    assert len(killed_after) == 2, text  # both SIGKILLs hit batches of the project's PySpark
    # The older Spark's store is the one resumed: its provider class is in the first batch's offset log.
    first = json.loads((run_dir / "checkpoint" / "offsets" / "0").read_text().splitlines()[1])["conf"]
    assert (
        first["spark.sql.streaming.stateStore.providerClass"]
        == STATE_STORES[store]["spark.sql.streaming.stateStore.providerClass"]
    ), text
    crossing = straddling_groups(run_dir, operator, upgrade[0]["batch"])
    assert crossing > 0, (
        f"no {operator} group spans the upgrade: the verdict proves nothing about the old state\n{text}"
    )
    doc["crossing_groups"] = crossing
    print(f"PySpark {version} -> this PySpark, {operator} on {store}: {doc['verdict']}, {crossing} groups across")
    return doc


def test_an_aggregation_checkpoint_of_pyspark_3_5_on_rocksdb_resumes_exactly_once_under_kills(
    pool: DriverPool, tmp_path: Path
) -> None:
    play(pool, tmp_path / "run", "3.5", "aggregation", "rocksdb")


@pytest.mark.heavy
@pytest.mark.parametrize("store", ["hdfs", "rocksdb"])
@pytest.mark.parametrize("operator", sorted(OPERATORS))
@pytest.mark.parametrize("version", ["3.5", "4.0"])
def test_a_stateful_checkpoint_of_an_older_pyspark_resumes_exactly_once_under_kills(
    pool: DriverPool, tmp_path: Path, version: str, operator: str, store: str
) -> None:
    play(pool, tmp_path / "run", version, operator, store)


@pytest.mark.heavy
def test_state_rolled_back_at_the_upgrade_is_caught_with_anomalies_after_it(
    pool: DriverPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The negative control: the same run, but the older PySpark's newest state version silently equals the one
    before it (its HDFS delta files replaced by the previous batch's, which Spark reads without complaint). The
    oracle must fail it, with the anomalies after the upgrade."""
    import harness.engine.runner as runner

    real = runner.run_round

    def rolled_back(paths: Any, python: str, round_no: int) -> dict[str, Any]:
        done = real(paths, python, round_no)
        if round_no == 2:
            for part in (paths.checkpoint / "state" / "0").glob("[0-9]*"):
                shutil.copy(part / "1.delta", part / "2.delta")
        return done

    monkeypatch.setattr(runner, "run_round", rolled_back)
    doc, text = spark_upgrade(pool, tmp_path / "run", "3.5", "aggregation", "hdfs")
    assert doc["verdict"] == "violated", text
    kinds = {a["kind"] for a in doc["anomalies"]}
    assert kinds & {"lost", "duplicate", "wrong-value"}, text


def test_the_older_pyspark_itself_is_refused_in_one_line_by_every_command_that_needs_pyspark_4(tmp_path: Path) -> None:
    """PySpark 3.5 writes checkpoints the harness resumes, but the harness does not run on it: its Python has no
    ``pyspark.sql.datasource``, which the replayable source, the crash-injecting sinks and the checks stand on.
    Each such command says so in one line naming the range (exit 2), before importing any of them; the
    checkpoint reader, which needs none, still answers."""
    import subprocess

    python = old_python("3.5")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "VIRTUAL_ENV", "PYTHONPATH"))}
    env["PYTHONPATH"] = str(root)  # the checkout, as an install would put it on the path
    for argv in (
        ["run", "file_source_json", "--kills", "1"],
        ["chaos", "file_sink_stateless", "--examples", "1"],
        ["check-sink", "sink.py:Sink", "--read-back", "sink:read"],
        ["list"],
    ):
        done = subprocess.run([python, "-m", "harness", *argv], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        said = done.stdout + done.stderr
        assert done.returncode == 2 and said.count("\n") == 1, (argv, said)
        assert said.startswith("harness: PySpark 3.5.") and "outside the range" in said, (argv, said)
        assert "(pyspark>=4.0,<4.4)" in said, (argv, said)
    done = subprocess.run([python, "-m", "harness", "inspect", str(tmp_path / "none")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2 and "does not exist" in done.stderr and "outside the range" not in done.stderr
    # The help shows the commands that run there, and says why the others are missing.
    done = subprocess.run([python, "-m", "harness", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0 and "{inspect,merge}" in done.stdout, done.stdout + done.stderr
    said = " ".join(done.stdout.split())  # argparse wraps the epilog to the terminal's width
    assert "outside the range" in said and "Here only these run: inspect, merge." in said, said
