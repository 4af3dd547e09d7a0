"""Volume and long runs under real SIGKILLs (issue 13 points 1 and 2).

The heavy tier runs the acceptance pair at 10^6 rows (the file sink holds under 3 kills; the naive
``foreachBatch`` append is caught with its duplicates located in the killed batch). The default suite keeps
one representative of both: 60,000 rows in 60 batches through the file sink, killed in two of its log's
compaction batches, each fault named by the boundary it hit."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fault_injectors.plan import FaultRule
from harness.engine.pool import DriverPool
from harness.engine.report import render_text, to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument
from tests.integration.clirun import TOKEN_PREFIX, leftover_processes


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DriverPool]:
    shared = DriverPool(tmp_path_factory.mktemp("pool"), "local[2]", {}, token=TOKEN_PREFIX + "vol", standby=True)
    yield shared
    shared.close()
    assert leftover_processes() == [], "a harness run left processes behind"


def _kills(*texts: str) -> tuple[FaultRule, ...]:
    return tuple(dataclasses.replace(parse_kill_argument(t), id=f"x{i + 1}") for i, t in enumerate(texts))


def _run(pool: DriverPool, run_dir: Path, spec: RunSpec) -> tuple[dict[str, Any], str]:
    log: list[str] = []
    outcome = run_spec(spec, run_dir=run_dir, echo=log.append, pool=pool)
    return to_json(outcome), "\n".join([*log[-30:], render_text(outcome)])


def test_a_60_batch_run_with_kills_in_compaction_batches_holds_and_names_them(pool: DriverPool, tmp_path: Path) -> None:
    """60,000 rows in 60 batches of 1,000: past five compactions of the file sink's log (batches 9, 19, ...),
    with a SIGKILL inside compaction batch 19 (mid-write) and one after compaction batch 39 committed."""
    kills = _kills("sink.write.mid:19", "after_commit_logged:39")
    spec = RunSpec("file_sink_stateless", 2, kills=0, rounds=1, volume=60_000, batch_rows=1_000, extra_faults=kills)
    doc, log = _run(pool, tmp_path / "run", spec)
    assert doc["verdict"] == "exactly-once", log
    assert len(doc["batches"]) == 60, log
    assert [(k["point"], k["batch"], k["boundaries"]) for k in doc["kills_fired"]] == [
        ("sink.write.mid", 19, ["file-sink log compaction"]),
        ("after_commit_logged", 39, ["file-sink log compaction"]),
    ], log
    assert "[file-sink log compaction batch]" in log
    assert doc["expected_rows"] == doc["observed_rows"] > 35_000  # the filter keeps about two thirds


@pytest.mark.heavy
def test_a_1e6_row_run_through_the_file_sink_holds_under_three_kills(pool: DriverPool, tmp_path: Path) -> None:
    spec = RunSpec("file_sink_stateless", 4, kills=3, volume=1_000_000)
    doc, log = _run(pool, tmp_path / "run", spec)
    assert doc["verdict"] == "exactly-once", log
    assert len(doc["kills_fired"]) == 3, log
    assert doc["expected_rows"] == doc["observed_rows"] > 600_000


@pytest.mark.heavy
def test_a_1e6_row_naive_foreach_batch_append_is_caught(pool: DriverPool, tmp_path: Path) -> None:
    kills = _kills("sink.commit.after:1")
    spec = RunSpec("foreachbatch_append_naive", 4, kills=0, rounds=2, volume=1_000_000, extra_faults=kills)
    doc, log = _run(pool, tmp_path / "run", spec)
    assert doc["verdict"] == "violated", log
    assert {a["kind"] for a in doc["anomalies"]} == {"duplicate"}, log
    assert doc["anomaly_counts"]["duplicate"] > 100_000  # the whole replayed batch, counted where the data is
    assert {a["batch_id"] for a in doc["anomalies"]} == {1}, log  # the capped sample, located in the killed batch
