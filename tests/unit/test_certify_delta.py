"""Certify's Delta rows without Spark: what each row runs and cites, the preflight's one line, and the watcher
that reaches ``sink.commit.after`` of Spark's Delta sink from the table's log (no JVM: nothing to stop)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from fault_injectors.crash import FaultSite
from fault_injectors.plan import FaultPlan, FaultRule
from harness.conformance.certify import delta
from harness.conformance.certify.command import ROWS
from harness.conformance.certify.documented import DOCUMENTED
from harness.conformance.guarantees import AT_LEAST_ONCE, EXACTLY_ONCE
from scenarios import get_scenario
from scenarios.delta.commit_watch import DeltaCommitWatcher

EXPECTED = {
    "sink:delta": (EXACTLY_ONCE, "Delta table as a sink"),
    "sink:delta-foreachbatch-txn": (EXACTLY_ONCE, "Idempotent table writes in foreachBatch"),
    "sink:delta-foreachbatch-naive": (AT_LEAST_ONCE, "Idempotent table writes in foreachBatch"),
    "sink:delta-merge-session-txn": (EXACTLY_ONCE, "Idempotent writes; delta-io/delta PR #1555"),
    "sink:delta-merge-no-txn": (AT_LEAST_ONCE, "Upsert from streaming queries using foreachBatch"),
    "sink:deltars-txn": (EXACTLY_ONCE, "Transaction Identifiers; delta-io/delta-rs issue #2580"),
    "sink:deltars-unchecked": (AT_LEAST_ONCE, "delta-io/delta-rs issue #2580"),
}


def test_every_delta_row_is_a_sink_row_killed_in_its_commit_window_and_cited() -> None:
    rows = {r.key: r for r in ROWS if r.key.startswith("sink:delta")}
    assert set(rows) == set(EXPECTED)
    for key, row in rows.items():
        level, where = EXPECTED[key]
        assert (row.kind, row.kill_points, row.kafka) == ("sink", ("sink.write.mid", "sink.commit.after"), False)
        assert row.scenario is not None and row.needs is not None
        assert "sink.commit.after" in get_scenario(row.scenario).kill_points, key
        assert DOCUMENTED[key].level == level and where in DOCUMENTED[key].where, key
    assert rows["sink:deltars-txn"].needs is delta.deltars_missing
    assert rows["sink:delta"].scenario == "harness.conformance.certify.delta:DELTA_SINK"
    assert "exactly-once processing" in DOCUMENTED["sink:delta"].quote
    assert "multiple times" in DOCUMENTED["sink:delta-merge-no-txn"].quote


def test_the_delta_sink_scenario_is_delta_sink_append_with_its_commit_window() -> None:
    base = get_scenario("delta_sink_append")
    points = delta.DELTA_SINK.kill_points
    assert points == base.kill_points and points[-2:] == ("sink.commit.after", "after_commit_logged")
    assert delta.DELTA_SINK.kill_only_points == {"sink.commit.after"}
    assert delta.DELTA_SINK.transform is base.transform and delta.DELTA_SINK.jars == ("delta-spark",)


def test_delta_rows_name_a_missing_jar_set_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    for reason in (delta.delta_missing(), delta.deltars_missing()):
        assert reason is not None and "delta-spark" in reason and "\n" not in reason


def _commit(log: Path, version: int, *txns: tuple[str, int]) -> None:
    lines = [{"commitInfo": {"operation": "STREAMING UPDATE", "timestamp": 1}}]
    lines += [{"txn": {"appId": app, "version": v}} for app, v in txns]
    log.mkdir(parents=True, exist_ok=True)
    tmp = log / f".{version:020d}.json.tmp"
    tmp.write_text("".join(json.dumps(line) + "\n" for line in lines))
    tmp.replace(log / f"{version:020d}.json")


def _watcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[DeltaCommitWatcher, list[Any]]:
    faults, ckpt = tmp_path / "faults", tmp_path / "checkpoint"
    faults.mkdir()
    (ckpt / "offsets").mkdir(parents=True)
    (ckpt / "commits").mkdir()
    FaultPlan((FaultRule("c2", "sink.commit.after", 1),)).save(faults / "plan.json")
    monkeypatch.delenv("HARNESS_RUN_OUTPUT", raising=False)
    site = FaultSite(faults, ckpt)
    watcher = DeltaCommitWatcher(site, str(ckpt), str(tmp_path / "output"), str(tmp_path / "t"))
    fired: list[Any] = []

    def fire(point: str, batch: int, **context: Any) -> None:  # a SIGKILL in a driver; recorded here
        fired.append((point, batch, context))
        watcher.stop()

    monkeypatch.setattr(watcher.site, "maybe_fire", fire)
    return watcher, fired


def test_the_watcher_fires_once_batch_ns_txn_is_in_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    watcher, fired = _watcher(tmp_path, monkeypatch)
    log = tmp_path / "t" / "_delta_log"
    _commit(log, 0, ("q", 0))
    (tmp_path / "checkpoint" / "commits" / "0").write_text("v1\n")
    watcher.start()
    (tmp_path / "checkpoint" / "offsets" / "1").write_text("v1\n")
    _commit(log, 1, ("other-query", 7))
    _commit(log, 2, ("q", 1))
    watcher.join(10)
    assert not watcher.is_alive()
    assert fired == [("sink.commit.after", 1, {"via": "delta-commit-watcher", "delta_version": 2})]
    assert watcher.txns == {0: 0, 7: 1, 1: 2}


def test_the_watcher_gives_up_a_batch_committed_before_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher, fired = _watcher(tmp_path, monkeypatch)
    for log in ("offsets", "commits"):
        (tmp_path / "checkpoint" / log / "1").write_text("v1\n")
    _commit(tmp_path / "t" / "_delta_log", 0, ("q", 1))
    watcher.start()
    watcher.join(10)
    assert not watcher.is_alive() and fired == [] and watcher.skipped == {1}


def test_the_watcher_waits_for_a_new_query_s_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # attach_sink runs before Spark creates a new query's checkpoint: the watcher must not end for its absence.
    import shutil

    watcher, fired = _watcher(tmp_path, monkeypatch)
    shutil.rmtree(tmp_path / "checkpoint")
    watcher.start()
    time.sleep(0.05)
    assert watcher.is_alive()
    (tmp_path / "checkpoint" / "offsets").mkdir(parents=True)
    (tmp_path / "checkpoint" / "offsets" / "1").write_text("v1\n")
    _commit(tmp_path / "t" / "_delta_log", 0, ("q", 1))
    watcher.join(10)
    assert fired == [("sink.commit.after", 1, {"via": "delta-commit-watcher", "delta_version": 0})]
