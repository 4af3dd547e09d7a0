"""Each kind of scenario source under real SIGKILLs (issue 12 point 1): a correct pipeline holds and a
pipeline with one broken sink is caught, for Spark's file source (JSON and CSV files the harness
publishes) and for the replayable source with a user's schema. The pipelines are
:mod:`examples.pipelines.orders` (a user's JSON events with a nested struct, aggregated) and
:mod:`scenarios.library.file_source_json`. The JSON files' correct pipeline under kills is heavy (the default
suite keeps its twin without a batch marker, the CSV twin, and a Python data source's correct/broken pair)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.engine.pool import DriverPool
from harness.engine.report import to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument


@pytest.fixture
def run(pool: DriverPool, tmp_path: Path) -> Any:
    def play(
        scenario: str, *kills: str, seed: int = 1, rounds: int = 3, name: str = "run"
    ) -> tuple[dict[str, Any], str]:
        log: list[str] = []
        faults = tuple(dataclasses.replace(parse_kill_argument(k), id=f"x{i + 1}") for i, k in enumerate(kills))
        spec = RunSpec(scenario, seed, kills=0, rounds=rounds, extra_faults=faults)
        outcome = run_spec(spec, run_dir=tmp_path / name, echo=log.append, pool=pool)
        return to_json(outcome), "\n".join(log[-40:])

    return play


@pytest.mark.heavy
def test_user_pipeline_on_json_files_holds_under_sigkills(run: Any, tmp_path: Path) -> None:
    doc, log = run("examples.pipelines.orders:SCENARIO", "after_offsets_logged:0", "sink.commit.after:1")
    assert doc["verdict"] == "exactly-once", log
    assert sorted(k["point"] for k in doc["kills_fired"]) == ["after_offsets_logged", "sink.commit.after"], log
    assert all(k["action"] == "kill_process_group" for k in doc["kills_fired"])
    inputs = sorted(p.name for p in (tmp_path / "run" / "input").iterdir())
    assert len(inputs) == 3 * 2 and all(n.endswith(".json") for n in inputs), inputs  # 3 rounds x 2 partitions
    # The file source's log located each batch on the files the harness published: 3 rounds, 3 batches.
    assert [(b["batch_id"], sorted(b["end"])) for b in doc["batches"]] == [(i, [0, 1]) for i in range(3)]
    assert doc["expected_rows"] == doc["observed_rows"] == 5  # the countries


def test_user_pipeline_on_json_files_without_a_batch_marker_counts_a_replay_twice(run: Any) -> None:
    doc, log = run("examples.pipelines.orders:BROKEN_SCENARIO", "sink.commit.after:1", rounds=2)
    assert doc["verdict"] == "violated", log
    kinds = {a["kind"] for a in doc["anomalies"]}
    assert kinds == {"wrong-value"}, log
    # Every country's totals are off by exactly batch 1's share: the replay was added twice.
    wrong = doc["anomalies"][0]
    assert wrong["observed_row"]["orders"] > wrong["row"]["orders"], wrong


def test_csv_files_naive_append_duplicates_are_located_in_the_killed_batch(run: Any) -> None:
    doc, log = run("scenarios.library.file_source_json:NAIVE_APPEND", "sink.commit.after:1", rounds=2)
    assert doc["verdict"] == "violated", log
    dupes = [a for a in doc["anomalies"] if a["kind"] == "duplicate"]
    assert dupes and {a["kind"] for a in doc["anomalies"]} == {"duplicate"}, log
    [kill] = doc["kills_fired"]
    # Located by the file-source log: batch 1's files, the offsets of round 2.
    assert {a["batch_id"] for a in dupes} == {1}, log
    batch1 = next(b for b in doc["batches"] if b["batch_id"] == 1)
    for a in dupes:
        assert batch1["start"][a["partition"]] <= a["offset"] < batch1["end"][a["partition"]]
        assert a["fault"]["history_index"] == kill["history_index"]


@pytest.mark.heavy  # a user's Rows: test_user_pipeline_on_json_files_* (the same Rows on the file source)
def test_user_schema_on_the_replayable_source_holds_and_its_broken_twin_is_caught(run: Any) -> None:
    doc, log = run(
        "examples.pipelines.orders:REPLAYABLE_SCENARIO", "source.read:0", "sink.commit.after:1", rounds=2, name="ok"
    )
    assert doc["verdict"] == "exactly-once", log
    assert sorted(k["point"] for k in doc["kills_fired"]) == ["sink.commit.after", "source.read"], log
    doc, log = run("examples.pipelines.orders:BROKEN_REPLAYABLE_SCENARIO", "sink.commit.after:0", rounds=2, name="bad")
    assert doc["verdict"] == "violated", log
    assert {a["kind"] for a in doc["anomalies"]} == {"wrong-value"}, log


def test_a_users_python_datasource_holds_under_sigkills_and_a_naive_sink_on_it_is_caught(run: Any) -> None:
    """A connector author's own source (:mod:`examples.pipelines.log_lines`), fed through its context."""
    doc, log = run(
        "examples.pipelines.log_lines:SCENARIO", "after_offsets_logged:0", "sink.commit.after:1", rounds=2, name="ok"
    )
    assert doc["verdict"] == "exactly-once", log
    assert sorted(k["point"] for k in doc["kills_fired"]) == ["after_offsets_logged", "sink.commit.after"], log
    assert doc["expected_rows"] == doc["observed_rows"] > 0
    doc, log = run("examples.pipelines.log_lines:BROKEN_SINK_SCENARIO", "sink.commit.after:0", rounds=1, name="bad")
    assert doc["verdict"] == "violated", log
    assert {a["kind"] for a in doc["anomalies"]} == {"duplicate"}, log
    [kill] = doc["kills_fired"]
    # Located by the source's own offsets: every duplicate is a line batch 0 read, after the kill.
    for a in doc["anomalies"]:
        assert a["batch_id"] == 0 and a["fault"]["history_index"] == kill["history_index"], a
        start, end = a["offset_range"]["source"]
        assert start == "initialOffset()" and a["row"]["line"] < json.loads(end)[str(a["row"]["partition"])], a


MY_SOURCE = """
from examples.connectors.jsonl_source import JsonlSource


class MyLines(JsonlSource):
    @classmethod
    def name(cls):
        return "my_lines"
"""

MY_PIPELINE = """
from examples.pipelines.log_lines import CONTEXT, log_scenario
from harness.sources import PythonSource

SCENARIO = log_scenario("my_lines", PythonSource({source!r}, CONTEXT))
"""


def test_a_pipeline_made_importable_after_the_pools_driver_started_runs_on_it(
    pool: DriverPool, run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's pool outlives the environment its drivers started in: a team's pipeline in a directory made
    importable since, its connector in another (``path.py:Class``), runs on it; its driver, JVM and Spark's
    Python workers, which keep the import path they started with, are started again."""
    pool.start()
    conn, pipes = tmp_path / "conn", tmp_path / "pipes"
    conn.mkdir()
    pipes.mkdir()
    (conn / "my_lines_source.py").write_text(MY_SOURCE)
    (pipes / "my_lines_pipeline.py").write_text(MY_PIPELINE.format(source=f"{conn / 'my_lines_source.py'}:MyLines"))
    for root in (conn, pipes):
        monkeypatch.syspath_prepend(str(root))
    # As loading a pipeline by its path does (harness.sources.loading.add_import_root); restored after the test.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(pipes)) if p))
    doc, log = run("my_lines_pipeline:SCENARIO", "after_offsets_logged:0", rounds=2, name="late")
    assert doc["verdict"] == "exactly-once", log
    assert len(doc["kills_fired"]) == 1 and doc["expected_rows"] == doc["observed_rows"] > 0, log
