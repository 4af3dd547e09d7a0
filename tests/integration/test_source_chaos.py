"""Chaos campaigns over a connector's own source (issue 12 point 3), under real SIGKILLs.

The broken source (overlapping partitions: a partition re-reads the row at its start offset) is found,
shrunk and bundled, and its bundle replays with the same anomalies; the correct JSON-lines source over the
same context holds. The full acceptance run (20 examples, a shrink to one round and 3 replays out of 3) is
measured in the issue note; here the shrink budget is short to keep the suite's time."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from harness.conformance.source_campaign import run_source_campaign
from harness.conformance.source_schedule import SourceSubject
from harness.profiles import get_profile
from tests.integration.clirun import harness, leftover_processes

EX = "examples/connectors"
CONTEXT = f"{EX}/_jsonl.py:log_context"


def test_overlapping_source_is_found_shrunk_bundled_and_replayed(tmp_path: Path) -> None:
    subject = SourceSubject(f"{EX}/overlapping_partitions.py:OverlappingPartitionsSource", CONTEXT)
    profile = dataclasses.replace(get_profile("dev"), examples=6, shrink_budget_s=20)
    result = run_source_campaign(subject, seed_value=1, profile=profile, work_dir=tmp_path / "w", echo=print)
    assert result.verdict == "violated" and result.error is None, [e.verdict for e in result.examples]
    assert result.failure is not None and set(result.failure.counts) == {"duplicate"}
    assert any(e.schedule.kills for e in result.examples)
    first = next(e for e in result.examples if e.verdict == "violated")
    smaller = len(result.failure.schedule.rounds) < len(first.schedule.rounds)
    assert result.failure.index > first.index and smaller, "the violation was not shrunk"
    doc = json.loads((result.bundle / "bundle.json").read_text())
    assert doc["kind"] == "source" and doc["subject"]["source"] == subject.source and doc["anomalies"]
    assert (result.bundle / "row_diff.txt").exists() and (result.bundle / "checkpoint" / "offsets").is_dir()

    rc, out, err = harness("replay", str(result.bundle), "--times", "2")
    assert rc == 1 and "reproduced 2/2 time(s)" in out, out + err[-2000:]
    assert "Row(partition=" in out  # the duplicated rows, side by side
    assert leftover_processes() == []


def test_correct_jsonl_source_holds(tmp_path: Path) -> None:
    rc, out, err = harness(
        "chaos", "--source", f"{EX}/jsonl_source.py:JsonlSource", "--context", CONTEXT, "--examples", "3",
        "--seed", "1", "--json", str(tmp_path / "r.json"),
    )  # fmt: skip
    doc = json.loads((tmp_path / "r.json").read_text())
    assert rc == 0 and doc["verdict"] == "exactly-once" and doc["examples"] == 3, out + err[-3000:]
    assert "no violation in 3 example(s)" in out and "rerun: .venv/bin/python -m harness chaos --source" in out
    assert leftover_processes() == []
