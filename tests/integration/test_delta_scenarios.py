"""Delta pipelines under real SIGKILLs (issue 28 points 1-2): each correct pipeline holds, each one-bug twin is
caught, and every anomaly names its batch and the Delta versions involved.

The default suite keeps one correct/broken pair (the totals ``MERGE`` with and without Delta's session txn
confs, the pair users get wrong most); the Delta streaming sink's holding case there is certify's ``sink:delta``
row (a SIGKILL in its commit window, test_conformance_certify.py). The streaming sink under three seeded kills
with its txns checked per batch, the other pairs (the upsert keyed by row and its twin split in two commits among
them), the complete-mode sink and the Delta source run in the heavy tier (``bin/test-heavy``)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.engine.pool import DriverPool
from harness.engine.report import to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument
from scenarios.delta.log import read_log
from tests.integration.clirun import harness, leftover_processes


def play(pool: DriverPool, run_dir: Path, scenario: str, *kills: str, seed: int = 7, seeded: int = 0) -> dict[str, Any]:
    log: list[str] = []
    faults = tuple(dataclasses.replace(parse_kill_argument(k), id=f"x{i + 1}") for i, k in enumerate(kills))
    spec = RunSpec(scenario, seed, kills=seeded, extra_faults=faults)
    doc = to_json(run_spec(spec, run_dir=run_dir, echo=log.append, pool=pool))
    doc["log"] = "\n".join(log[-40:])
    return doc


def _versions(where: str, what: str) -> list[int]:
    """The versions ``where`` names after ``what`` (``row in version(s)`` / ``batch 1 in version(s)``)."""
    found = re.search(re.escape(what) + r" in version\(s\) ([0-9, ]+)", where)
    assert found, where
    return [int(v) for v in found.group(1).split(",")]


def test_merge_with_session_txn_holds_and_without_it_over_counts_named_by_batch_and_version(
    pool: DriverPool, tmp_path: Path
) -> None:
    kill = "sink.commit.after:1"  # after batch 1's MERGE committed, before Spark wrote commits/1
    good = play(pool, tmp_path / "good", "foreachbatch_delta_merge", kill)
    assert good["verdict"] == "exactly-once" and good["kills_fired"], good["log"]
    assert good["observed_rows"] == good["expected_rows"] > 0
    bad = play(pool, tmp_path / "bad", "foreachbatch_delta_merge_no_txn", kill)
    assert bad["verdict"] == "violated", bad["log"]
    wrong = [a for a in bad["anomalies"] if a["kind"] == "wrong-value"]
    assert wrong and {a["kind"] for a in bad["anomalies"]} == {"wrong-value"}, bad["log"]
    # Every over-counted group is one a replay of batch 1 added to: its count is higher, never lower.
    assert all(a["observed_row"]["rows"] > a["row"]["rows"] for a in wrong), wrong
    twice = re.compile(r"batch\(es\) written more than once: 1 \(versions (\d+), (\d+)\)")
    for a in wrong:
        where = a["sink_where"] or ""
        assert where.startswith("Delta: row in version(s) ") and twice.search(where), where
    # The two versions named for batch 1 are two MERGE commits in the table's log, with no txn between them.
    found = twice.search(wrong[0]["sink_where"])
    assert found is not None
    commits = {c.version: c for c in read_log(tmp_path / "bad" / "output" / "table")}
    first, second = (commits[int(v)] for v in found.groups())
    assert first.operation == second.operation == "MERGE" and not first.txns and not second.txns


@pytest.mark.heavy
def test_delta_streaming_sink_holds_under_seeded_sigkills(pool: DriverPool, tmp_path: Path) -> None:
    doc = play(pool, tmp_path / "run", "delta_sink_append", seed=11, seeded=3)
    assert doc["verdict"] == "exactly-once" and len(doc["kills_fired"]) == 3, doc["log"]
    # Delta's sink committed each batch with a txn of the query's id and the batch id: one version per batch.
    query_id = json.loads((tmp_path / "run" / "checkpoint" / "metadata").read_text())["id"]
    txns = [t for c in read_log(tmp_path / "run" / "output" / "table") for t in c.txns]
    batches = [b["batch_id"] for b in doc["batches"] if b["committed"]]
    assert sorted(v for app, v in txns if app == query_id) == batches and len(batches) >= 4
    inspect_damaged_by_hand(tmp_path / "run", query_id, batches[-1])


def _violations(out: str) -> set[tuple[str, int | None]]:
    return {(f["id"], f["batch_id"]) for f in json.loads(out)["findings"] if f["severity"] == "violation"}


def inspect_damaged_by_hand(run: Path, query_id: str, last: int) -> None:
    """``inspect --delta`` on the run's checkpoint and table: clean, then with the table's log edited so that a
    committed batch has no Delta commit, a batch is in two, and the newest txn is ahead of the checkpoint."""
    log = run / "output" / "table" / "_delta_log"
    args = ("inspect", str(run / "checkpoint"), "--delta", str(run / "output" / "table"), "--json", "--limit", "0")
    rc, out, err = harness(*args)
    assert rc == 0 and not _violations(out), out + err

    def commit(version: int) -> Path:
        return log / f"{version:020d}.json"

    lines = commit(1).read_text().splitlines(keepends=True)
    commit(1).write_text("".join(line for line in lines if '"txn"' not in line))  # batch 1: no Delta commit
    txn2 = next(line for line in commit(2).read_text().splitlines(keepends=True) if '"txn"' in line)
    commit(3).write_text(commit(3).read_text() + txn2)  # batch 2: written by versions 2 and 3
    ahead = f'"appId":"{query_id}","version":{last + 5}'
    commit(last).write_text(commit(last).read_text().replace(f'"appId":"{query_id}","version":{last}', ahead))
    rc, out, err = harness(*args)
    found = _violations(out)
    assert rc == 1 and "Traceback" not in err, out + err
    assert {("delta-batch-missing", 1), ("delta-txn-repeated", 2), ("delta-txn-ahead", last + 5)} <= found, found
    rc, out, err = harness("inspect", str(run / "checkpoint"), "--delta", str(run / "output"))
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "not a Delta table" in err, err


@pytest.mark.heavy  # about 50 s: the MERGE pair above is the default suite's foreachBatch Delta case
def test_upsert_keyed_by_row_holds_and_split_in_two_commits_loses_rows_named_by_batch_and_version(
    pool: DriverPool, tmp_path: Path
) -> None:
    kill = "sink.commit.after:1"  # after batch 1's MERGE committed, before Spark wrote commits/1
    good = play(pool, tmp_path / "good", "foreachbatch_delta_upsert", kill)
    assert good["verdict"] == "exactly-once" and good["kills_fired"], good["log"]
    assert good["observed_rows"] == good["expected_rows"] > 0
    bad = play(pool, tmp_path / "bad", "foreachbatch_delta_upsert_split", kill)
    assert bad["verdict"] == "violated" and {a["kind"] for a in bad["anomalies"]} == {"lost"}, bad["log"]
    lost = bad["anomalies"]
    # Delta skipped every batch's second MERGE, not only the replayed batch's: rows are lost in many batches.
    assert 1 in {a["batch_id"] for a in lost} and len({a["batch_id"] for a in lost}) > 2, bad["log"]
    commits = {c.version: c for c in read_log(tmp_path / "bad" / "output" / "table")}
    for a in lost:
        where = a["sink_where"] or ""
        assert where.startswith("Delta: row in no version; "), where
        # The one version each batch made is its first chunk's MERGE, carrying the batch's txn.
        (version,) = _versions(where, f"batch {a['batch_id']}")
        assert commits[version].operation == "MERGE" and a["batch_id"] in {v for _, v in commits[version].txns}, where


@pytest.mark.heavy  # about 2 x 60 s each
@pytest.mark.parametrize(
    ("correct", "broken"),
    [
        ("foreachbatch_delta_txn", "foreachbatch_delta_naive"),
        ("foreachbatch_deltars_txn", "foreachbatch_deltars_unchecked"),
    ],
)
def test_append_pairs_correct_holds_and_twin_duplicates_batch_1_in_two_versions(
    pool: DriverPool, tmp_path: Path, correct: str, broken: str
) -> None:
    good = play(pool, tmp_path / "good", correct, "sink.commit.after:1", "sink.step:3:2")
    assert good["verdict"] == "exactly-once" and len(good["kills_fired"]) == 2, good["log"]
    bad = play(pool, tmp_path / "bad", broken, "sink.commit.after:1")
    assert bad["verdict"] == "violated", bad["log"]
    dupes = [a for a in bad["anomalies"] if a["kind"] == "duplicate"]
    assert dupes and {a["batch_id"] for a in dupes} == {1}, bad["log"]
    for a in dupes:
        held, carried = _versions(a["sink_where"], "row"), _versions(a["sink_where"], "batch 1")
        assert len(held) == 2 and held == carried, a["sink_where"]


@pytest.mark.heavy  # about 120 s
def test_delta_complete_mode_sink_holds_under_seeded_sigkills(pool: DriverPool, tmp_path: Path) -> None:
    doc = play(pool, tmp_path / "run", "delta_sink_complete", seed=11, seeded=3)
    assert doc["verdict"] == "exactly-once" and len(doc["kills_fired"]) == 3, doc["log"]


@pytest.mark.heavy  # about 3 x 40 s
def test_delta_source_holds_and_a_naive_sink_behind_it_is_located_by_delta_offsets(
    pool: DriverPool, tmp_path: Path
) -> None:
    for name in ("delta_source_stream", "scenarios.library.delta_source_stream:BY_BYTES"):
        doc = play(pool, tmp_path / name.rsplit(":", 1)[-1], name, seed=5, seeded=3)
        assert doc["verdict"] == "exactly-once" and len(doc["kills_fired"]) == 3, doc["log"]
    bad = play(pool, tmp_path / "bad", "scenarios.library.delta_source_stream:NAIVE_APPEND", "sink.commit.after:2")
    dupes = [a for a in bad["anomalies"] if a["kind"] == "duplicate"]
    assert bad["verdict"] == "violated" and dupes, bad["log"]
    # Located through the Delta source's offsets in offsets/2 (reservoir version and file index).
    assert {a["batch_id"] for a in dupes} == {2}, bad["log"]
    assert all("reservoirVersion" in a["offset_range"]["source"][1] for a in dupes)


def test_a_delta_scenario_without_the_delta_jars_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # monkeypatch: a cache the session itself was given (HARNESS_CACHE_DIR) comes back after the test.
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "no-jars"))
    rc, out, err = harness("run", "foreachbatch_delta_txn", "--seed", "1", "--kills", "0")
    assert rc == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    refusal = "scenario foreachbatch_delta_txn cannot run here: jar set 'delta-spark'"
    assert len(lines) == 1 and refusal in lines[0], err
    assert "harness setup`" in lines[0] and "Traceback" not in err


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("broken", "examples", "minimal", "needs_fault"),
    [
        # measured: 294 s to find (example 6 of 10) and shrink, 100 s for the 3 replays
        ("foreachbatch_delta_merge_no_txn", "10", "sink.commit.after", True),
        # measured: 169 s (found at once: every batch loses rows; shrunk to 1 round of 1+2 rows)
        ("foreachbatch_delta_upsert_split", "5", "1 round(s)", False),
    ],
)
def test_acceptance_chaos_finds_shrinks_and_bundles_the_broken_merge_and_replays_it_3_of_3(
    tmp_path: Path, broken: str, examples: str, minimal: str, needs_fault: bool
) -> None:
    before = set(leftover_processes())  # what an earlier CLI run of the session left, if anything
    rc, out, err = harness(
        "chaos", broken, "--examples", examples, "--seed", "1", "--profile", "ci",
        "--work-dir", str(tmp_path / "w"), "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    doc = json.loads((tmp_path / "r.json").read_text())
    assert rc == 1 and doc["verdict"] == "violated" and doc["bundle"], out + err[-3000:]
    assert minimal in doc["minimal_schedule"], doc["minimal_schedule"]
    # The over-count needs a replay; the split merge loses rows with no crash, and the campaign says so.
    assert (doc["fault_free_bundle"] is None) == needs_fault, out[-3000:]
    if not needs_fault:  # the fault-free bundle replays as the shrunk one does
        rc, out, err = harness("replay", doc["fault_free_bundle"], "--times", "1")
        assert rc == 1 and "reproduced 1/1 time(s)" in out, out + err[-3000:]
    rc, out, err = harness("replay", doc["bundle"], "--times", "3")
    assert rc == 1 and "reproduced 3/3 time(s)" in out, out + err[-3000:]
    assert set(leftover_processes()) <= before
