"""Campaigns over context-less sources (issue 25 point 2), the pure parts: what is drawn and how it shrinks,
the JSON a bundle keeps, the replay key, where a round's kill is armed, the report and the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import find, given, settings

from harness.chaos.profiles import get_profile
from harness.cli.main import main
from harness.conformance.source.bundle import load_source_bundle, replay_key
from harness.conformance.source.campaign import SourceCampaignResult, SourceExample, render_source_campaign
from harness.conformance.source.e2e import KILL_POINTS
from harness.conformance.source.schedule import (
    MAX_BATCHES,
    SourceSchedule,
    SourceSubject,
    contextless_schedules,
    play,
    schedules_for,
)
from harness.engine.commandline import harness_prefix, shell_line
from tests.admission import needs_admission_control

#: How the harness is started here (``.venv/bin/python -m harness`` from a clone).
HARNESS = shell_line(harness_prefix())

EX = "examples/connectors"
COUNTS = f"{EX}/counts_from_zero.py:CountsFromZeroSource"
ROOT = Path(__file__).resolve().parents[2]


@given(contextless_schedules(max_rounds=2, max_faults=1))
@settings(max_examples=100, deadline=None)
def test_drawn_contextless_schedules_are_valid(schedule: SourceSchedule) -> None:
    assert schedule.batches is not None and 1 <= schedule.batches <= MAX_BATCHES
    assert 1 <= len(schedule.rounds) <= 3 and schedule.kills <= 1
    for nth, point in schedule.rounds:
        assert (point is None and nth == 0) or (point in KILL_POINTS and 1 <= nth <= schedule.batches)
    assert hash(schedule) == hash(SourceSchedule(schedule.rounds, schedule.batches))


def test_a_subject_without_a_context_draws_contextless_schedules() -> None:
    drawn = find(schedules_for(SourceSubject(COUNTS), 2, 2), lambda s: True)
    assert drawn == SourceSchedule(((0, None),), 1)  # the simplest: one round of one batch, no kill
    with_ctx = find(schedules_for(SourceSubject(COUNTS, f"{EX}/_jsonl.py:log_context"), 2, 2), lambda s: True)
    assert with_ctx == SourceSchedule(((1, None),))


@pytest.mark.parametrize(
    ("condition", "minimal"),
    [
        (lambda s: s.kills >= 1, SourceSchedule(((1, "after_offsets_logged"),), 1)),
        (lambda s: any(p == "sink.commit.after" for _, p in s.rounds), SourceSchedule(((1, "sink.commit.after"),), 1)),
        (lambda s: any(n == 3 for n, _ in s.rounds), SourceSchedule(((3, "after_offsets_logged"),), 3)),
        (lambda s: s.kills >= 2, SourceSchedule(((1, "after_offsets_logged"), (1, "after_offsets_logged")), 1)),
        (lambda s: len(s.rounds) >= 2, SourceSchedule(((0, None), (0, None)), 1)),
    ],
)
def test_contextless_schedules_shrink_to_fewer_rounds_batches_and_earlier_kills(
    condition: Any, minimal: SourceSchedule
) -> None:
    assert find(contextless_schedules(2, 2), condition, settings=settings(max_examples=500)) == minimal


def test_describe_and_the_bundle_json_round_trip() -> None:
    s = SourceSchedule(((2, "after_commit_logged"), (0, None)), 3)
    assert s.describe() == "2 round(s) of 3 batch(es): kill at after_commit_logged of its batch 2; no kill"
    doc = json.loads(json.dumps({"subject": SourceSubject(COUNTS).__dict__, **s.to_doc()}))
    assert load_source_bundle(doc) == (SourceSubject(COUNTS), s)
    old = {"schedule": [[3, "after_offsets_logged"]]}  # a bundle written before context-less schedules
    assert SourceSchedule.from_doc(old) == SourceSchedule(((3, "after_offsets_logged"),))
    assert SourceSubject(COUNTS).contextless and SourceSubject(COUNTS).command() == f"--source {COUNTS}"


def test_a_contextless_replay_matches_verdict_and_anomaly_sides_not_rows() -> None:
    a = {"kind": "duplicate", "row": {"value": 3}, "observed_count": 2, "expected_count": 1}
    b = {**a, "row": {"value": 40}}
    assert replay_key("violated", [a], True) == replay_key("violated", [b, a], True)
    assert replay_key("violated", [a], False) != replay_key("violated", [b], False)
    assert replay_key("violated", [a], True) != replay_key("violated", [{**a, "kind": "lost"}], True)
    # Measured on counts_from_zero: the same schedule re-reads rows that show as duplicates or as phantoms,
    # depending on whether the regressed batch is the newest committed one (the oracle's end).
    assert replay_key("violated", [a], True) == replay_key("violated", [{**a, "kind": "phantom"}], True)
    assert replay_key("violated", [a], False) != replay_key("violated", [{**a, "kind": "phantom"}], False)
    assert replay_key("violated", [a], True) != replay_key("exactly-once", [], True)


@needs_admission_control
def test_play_refuses_a_schedule_of_the_other_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    with pytest.raises(ValueError, match="does not fit the source"):
        play(SourceSubject(COUNTS), SourceSchedule(((5, None),)), tmp_path / "run", pool=None)


def _checkpoint(root: Path, offsets: int, commits: int) -> Any:
    from harness.engine.rundir import RunPaths

    paths = RunPaths(root)
    paths.create()
    for sub, n in (("offsets", offsets), ("commits", commits)):
        (paths.checkpoint / sub).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (paths.checkpoint / sub / str(i)).write_text("v1\n")
    return paths


@pytest.mark.parametrize(
    ("offsets", "commits", "point", "nth", "batch"),
    [
        (3, 3, "after_commit_logged", 2, 4),  # batches 0-2 committed: the round's 2nd batch is 4
        (4, 3, "after_commit_logged", 1, 3),  # batch 3 logged, not run: it is the first the round commits
        (4, 3, "after_offsets_logged", 1, 4),  # ... but its offsets are old: the first the round logs itself
        (4, 3, "after_offsets_logged", 2, 4),
        (0, 0, "sink.commit.after", 1, 0),
    ],
)
def test_a_contextless_kill_is_armed_at_the_nth_batch_the_round_commits(
    tmp_path: Path, offsets: int, commits: int, point: str, nth: int, batch: int
) -> None:
    from fault_injectors.plan import FaultPlan
    from harness.conformance.source.run import _Rules

    paths = _checkpoint(tmp_path / "run", offsets, commits)
    _Rules(paths, lambda m: None).arm(point, 1, nth=nth)
    (rule,) = FaultPlan.load(paths.faults / "plan.json").rules
    assert (rule.point, rule.batch) == (point, batch)


@needs_admission_control
def test_the_report_names_a_contextless_source_and_discarded_examples(tmp_path: Path) -> None:
    result = SourceCampaignResult(SourceSubject(COUNTS), 1, get_profile("ci"))
    schedule = SourceSchedule(((1, "after_offsets_logged"),), 2)
    result.examples = [SourceExample(1, schedule, "exactly-once", {}, 3.0)]
    result.discarded = {1: ["k1: kill at after_offsets_logged of batch 1"]}
    text = render_source_campaign(result)
    assert "context-less (no --context" in text and "discarded         1 (" in text, text
    assert f"rerun: {HARNESS} chaos --source {COUNTS} --examples 3 --seed 1" in text
    result.failure, result.bundle = result.examples[0], tmp_path
    assert "not the same rows" in render_source_campaign(result)


@needs_admission_control
def test_chaos_source_takes_a_source_without_a_context(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.conformance.source.campaign as campaign

    seen: list[SourceSubject] = []

    def fake(subject: SourceSubject, **kw: Any) -> SourceCampaignResult:
        seen.append(subject)
        schedules_for(subject, 2, 2)
        return SourceCampaignResult(subject, kw["seed_value"], kw["profile"])

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(campaign, "run_source_campaign", fake)
    assert main(["chaos", "--source", COUNTS, "--examples", "2", "--seed", "7", "--work-dir", str(tmp_path / "w")]) == 0
    out, err = capsys.readouterr()
    assert seen == [SourceSubject(COUNTS)] and "Traceback" not in err
    assert f"rerun: {HARNESS} chaos --source {COUNTS} --examples 2 --seed 7" in err
    assert "no violation in 0 example(s)" in out and "context-less" in out


def _campaign_without_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, every_run: bool) -> Any:
    """A campaign of 4 examples whose runs plan no batch for their kills (with ``every_run``: every run
    reports an unfired kill), run with ``play`` and the driver pool stubbed."""
    import harness.conformance.source.campaign as campaign
    import harness.engine.pool as pool_module
    from harness.conformance.source.run import SourceOutcome
    from harness.verdict.checker import CheckResult

    class NoPool:
        def __init__(self, *a: Any, **kw: Any) -> None:
            pass

        def close(self) -> None:
            pass

    runs: list[SourceSchedule] = []

    def no_data(subject: SourceSubject, schedule: SourceSchedule, run_dir: Path, pool: Any) -> SourceOutcome:
        runs.append(schedule)
        unfired = [f"k{i}: kill at {p} of batch {i}" for i, (_, p) in enumerate(schedule.rounds) if p]
        return SourceOutcome(run_dir, result=CheckResult("exactly-once"), unfired=unfired or every_run * ["k9"])

    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(pool_module, "DriverPool", NoPool)
    monkeypatch.setattr(campaign, "play", no_data)
    profile = get_profile("ci").with_examples(4)
    result = campaign.run_source_campaign(SourceSubject(COUNTS), seed_value=3, profile=profile, work_dir=tmp_path)
    return result, runs


@needs_admission_control
def test_examples_whose_kills_never_fired_are_discarded_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, _ = _campaign_without_data(monkeypatch, tmp_path, every_run=False)
    assert result.verdict == "exactly-once" and result.error is None and result.discarded
    assert sorted(result.discarded) == [e.index for e in result.examples if e.schedule.kills]
    assert f"discarded         {len(result.discarded)} (" in result.render()


@needs_admission_control
def test_a_campaign_that_discards_as_many_examples_as_asked_has_no_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result, runs = _campaign_without_data(monkeypatch, tmp_path, every_run=True)
    assert len(result.discarded) == len(runs) == 4, "it ran on after the 4th discarded example"
    assert result.verdict == "unknown" and result.exit_code == 2
    assert result.error and "4 example(s) discarded: a planned kill never fired" in result.error
    assert "does its data arrive by itself?" in result.render()
