"""End to end through the CLI: real child drivers, real SIGKILLs, real checkpoints."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec
from harness.verdict.rowdiff import HEADER, MAX_KEYS
from scenarios import get_scenario
from scenarios.rowgen import SourceConfig
from tests.integration.clirun import assert_renders, harness, leftover_processes


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Any:
    yield
    assert leftover_processes() == [], "a harness run left processes behind"


def _expected_duplicates(seed: int, batch: int, kills: int = 3, rounds: int | None = None) -> list[tuple[int, int]]:
    """The rows of ``batch`` the naive sink writes, predicted from the seed alone (pure functions)."""
    sc = get_scenario("foreachbatch_append_naive")
    start, end = build_schedule(RunSpec(sc.name, seed, kills=kills, rounds=rounds), sc).predicted_batches[batch]
    cfg = sc.source_config(seed)
    return sorted((r[0], r[1]) for p in end for r in cfg.rows(p, start[p], end[p]) if r[4] % 7 != 0)


# heavy: duplicates named and located in the killed batch: test_sources.py (CSV naive append),
# test_kafka_scenarios.py, test_pytest_failure_report.py
@pytest.mark.heavy
def test_naive_foreach_batch_is_caught_with_named_duplicates(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    rc, out, err = harness(
        "run",
        "foreachbatch_append_naive",
        "--seed",
        "7",
        "--kills",
        "3",
        "--json",
        str(tmp_path / "r.json"),
        "--run-dir",
        str(run_dir),
        "--html",
        str(tmp_path / "run.html"),
    )
    assert rc == 1, out + err[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verdict"] == "violated"
    [replayed] = [k for k in doc["kills_fired"] if k["point"] == "sink.commit.after"]
    dupes = [a for a in doc["anomalies"] if a["kind"] == "duplicate"]
    assert {a["kind"] for a in doc["anomalies"]} == {"duplicate"}
    per_batch = Counter(a["batch_id"] for a in dupes)
    faults = [(k["description"], k["context"]) for k in doc["kills_fired"]]
    diagnosis = f"duplicates per batch {dict(per_batch)}; faults {faults}"
    if set(per_batch) != {replayed["batch"]}:
        shutil.copytree(run_dir, Path(tempfile.gettempdir()) / "harness-test-failures" / run_dir.parent.name)
    assert set(per_batch) == {replayed["batch"]}, diagnosis
    assert sorted((a["partition"], a["offset"]) for a in dupes) == _expected_duplicates(7, replayed["batch"])
    assert all(a["fault"]["history_index"] == replayed["history_index"] for a in dupes)
    assert out.splitlines()[0].startswith(f"exactly-once violated: {len(dupes)} duplicate (")
    assert out.splitlines()[-1].endswith("-m harness run foreachbatch_append_naive --seed 7 --kills 3")
    history = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    assert [e["index"] for e in history] == list(range(len(history)))
    kill = history[replayed["history_index"]]
    assert (kill["type"], kill["f"]) == ("info", "kill")
    assert any(e["f"] == "crash" and e["type"] == "info" for e in history[kill["index"] :])
    assert (run_dir / "checkpoint" / "commits").is_dir() and (run_dir / "oracle" / "observed.parquet").exists()
    # The checkpoint itself is consistent: the duplicates are the sink's doing.
    assert doc["inspector"].startswith("checkpoint OK"), doc["inspector"]
    assert "checkpoint (python -m harness inspect):" in out
    # chispa's row diff names every duplicated row on the sink's side; plain text off a terminal.
    diff = out[out.index(HEADER) : out.index("checkpoint (python -m harness inspect):")]
    for partition, offset in sorted((a["partition"], a["offset"]) for a in dupes)[:MAX_KEYS]:
        assert f"Row(partition={partition}, offset={offset}, seq=" in diff, diff
    assert "\x1b[" not in out
    # The run's timeline page (run --html): the replayed batch, its duplicates linked to it, the fault, the replay.
    page = (tmp_path / "run.html").read_text()
    assert f'href="#run-batch-{replayed["batch"]}"' in page and f"duplicate ({len(dupes)})" in page
    assert_renders(tmp_path / "run.html", tmp_path, f"batch {replayed['batch']}", "sink.commit.after", "replay: ")


def test_same_seed_same_anomalies(tmp_path: Path) -> None:
    """An explicit kill's duplicates are exactly the rows the seed predicts, so every run of the seed has them."""
    rc, out, err = harness(
        "run",
        "foreachbatch_append_naive",
        "--seed",
        "3",
        "--kills",
        "0",
        "--kill",
        "sink.commit.after:1",
        "--rounds",
        "1",
        "--json",
        str(tmp_path / "r.json"),
    )
    assert rc == 1, out + err[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert {(a["kind"], a["batch_id"]) for a in doc["anomalies"]} == {("duplicate", 1)}
    got = sorted((a["partition"], a["offset"]) for a in doc["anomalies"])
    assert got == _expected_duplicates(3, 1, kills=0, rounds=1) and got


@pytest.mark.heavy  # CI time (16 s): test_crash_anywhere's step that never comes proves the same exit 2 and lines
def test_planned_kill_that_never_fires_fails_the_run() -> None:
    rc, out, err = harness(
        "run", "file_sink_stateless", "--seed", "1", "--kill", "after_offsets_logged:99", "--rounds", "1"
    )
    assert rc == 2, out + err[-3000:]
    assert "fault x1 planned (kill at after_offsets_logged of batch 99) never fired" in out
    assert out.splitlines()[0].startswith("harness error, no verdict")


def test_watchdog_kills_a_silent_driver() -> None:
    rc, out, err = harness(
        "run", "file_sink_stateless", "--seed", "1", "--kills", "0", "--rounds", "1", "--timeout", "0.5"
    )
    assert rc == 2, out + err[-3000:]
    assert "watchdog: driver-1 did not finish 'run' within 0 s and was killed" in out


def test_source_config_is_seeded() -> None:
    assert get_scenario("file_sink_stateless").source_config(4) == SourceConfig(seed=4, partitions=2)


@pytest.mark.heavy  # CI time (~80 s): the file sink's kills stay in the chaos library, timed-kill and backend cases
def test_file_sink_is_exactly_once_at_every_crash_point(tmp_path: Path) -> None:
    """Seven seeded SIGKILLs, one at each crash point the parquet file sink reaches, in distinct batches, fired
    in the planned order; the temp run directory is removed on success."""
    points = get_scenario("file_sink_stateless").kill_points
    rc, out, err = harness(
        "run",
        "file_sink_stateless",
        "--seed",
        "3",
        "--kills",
        str(len(points)),
        "--rounds",
        "3",
        "--json",
        str(tmp_path / "r.json"),
    )
    doc = json.loads((tmp_path / "r.json").read_text())
    assert rc == 0, out + err[-3000:]
    assert out.splitlines()[0].startswith("exactly-once held (scenario=file_sink_stateless, seed=3)")
    assert sorted(k["point"] for k in doc["kills_fired"]) == sorted(points)
    assert [k["point"] for k in doc["kills_fired"]] == [r["description"].split()[2] for r in doc["kills_planned"]]
    assert all(k["action"] == "kill_process_group" for k in doc["kills_fired"])
    assert doc["verdict"] == "exactly-once" and doc["anomalies"] == [] and doc["seed"] == 3
    assert doc["observed_rows"] == doc["expected_rows"] > 0
    assert all(b["committed"] for b in doc["batches"])
    assert doc["run_dir"] is None  # temp dir removed on success
