"""Timed kills (``batch.time``): the rule's contract, its CLI form, the spec and strategy around it, and the
checkpoint watcher that fires it, run in a real child process that it SIGKILLs (no Spark)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import find, given, settings
from hypothesis.errors import NoSuchExample

from fault_injectors.crash import FIRED_DIR, PLAN_FILE, read_ledger
from fault_injectors.plan import TIMED_POINT, FaultPlan, FaultPlanError, FaultRule
from harness.chaos.profiles import get_profile
from harness.chaos.result import _point_of
from harness.chaos.strategies import TIMED_MAX_MS, chaos_specs
from harness.cli.run import parse_kill
from harness.engine.spec import RunSpec, kill_argument
from scenarios import get_scenario
from tests.unit.watcher_child import run_watcher

NAIVE = get_scenario("foreachbatch_append_naive")
ROOT = Path(__file__).resolve().parents[2]


def test_a_timed_kill_is_a_once_only_sigkill_of_a_named_batch() -> None:
    rule = FaultRule("t", TIMED_POINT, 3, after_ms=250)
    assert rule.timed and rule.describe() == "kill 250 ms into batch 3 (timed, not deterministic)"
    assert "plan a smaller MS" in rule.why_unfired()
    assert FaultPlan.from_json(FaultPlan((rule,)).to_json()).rules == (rule,)
    bad = {
        "needs field 'batch'": {"batch": None},
        "field 'after_ms' must be": {"after_ms": None},
        "action 'kill_process_group'": {"action": "raise"},
        "fires once": {"times": 2},
        "'partition' does not apply": {"partition": 0},
    }
    for message, change in bad.items():
        with pytest.raises(FaultPlanError, match=message):
            FaultRule(**{"id": "t", "point": TIMED_POINT, "batch": 3, "after_ms": 250, **change})  # type: ignore[arg-type]
    with pytest.raises(FaultPlanError, match=r"'after_ms' belongs to point 'batch\.time' only"):
        FaultRule("t", "after_offsets_logged", 3, after_ms=250)


@pytest.mark.parametrize("text", ["batch.time:3:250", "batch.time:0:0"])
def test_timed_kill_argument_round_trips(text: str) -> None:
    assert kill_argument(parse_kill(text)) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("batch.time:3", "expected batch.time:BATCH:MS"),
        ("batch.time:3:soon", "BATCH and MS must be integers"),
        ("batch.time:3:100@raise", "can only kill"),
    ],
)
def test_bad_timed_kill_arguments_say_what_is_wrong(text: str, message: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse_kill(text)


def test_a_spec_with_a_timed_kill_is_not_deterministic() -> None:
    timed = RunSpec(NAIVE.name, 1, kills=0, extra_faults=(FaultRule("x1", TIMED_POINT, 1, after_ms=10),))
    assert not timed.deterministic and RunSpec(NAIVE.name, 1).deterministic
    assert "--kill batch.time:1:10" in timed.replay_command()
    assert RunSpec.from_dict(json.loads(timed.to_json())) == timed
    assert _point_of(f"x1: {timed.extra_faults[0].describe()}: landed 12 ms after offsets/1") == TIMED_POINT


def test_only_the_nightly_profile_draws_timed_kills() -> None:
    assert get_profile("nightly").timed_kills
    assert not get_profile("ci").timed_kills and not get_profile("dev").timed_kills


@settings(max_examples=60, deadline=None, database=None)
@given(chaos_specs(NAIVE, max_rounds=3, max_faults=3, timed=True))
def test_drawn_timed_kills_name_predicted_batches_once_each(spec: RunSpec) -> None:
    timed = [r for r in spec.extra_faults if r.timed]
    assert len({r.batch for r in timed}) == len(timed), "two timed kills in one batch"
    for rule in timed:
        assert rule.action == "kill_process_group" and rule.after_ms is not None
        assert 0 <= rule.after_ms <= TIMED_MAX_MS


def test_timed_kills_are_drawn_only_when_asked_and_shrink_away() -> None:
    def has_timed(spec: RunSpec) -> bool:
        return any(r.timed for r in spec.extra_faults)

    quiet = settings(database=None, max_examples=300)
    # Without timed=True no draw ever makes one (and a seed keeps the schedules it had before they existed).
    with pytest.raises(NoSuchExample):
        find(chaos_specs(NAIVE, max_faults=3), has_timed, settings=quiet)
    # With it, the smallest example that needs one has one, at 0 ms into the first batch.
    minimal = find(chaos_specs(NAIVE, max_faults=3, timed=True), has_timed, settings=quiet)
    (rule,) = [r for r in minimal.extra_faults if r.timed]
    assert (rule.batch, rule.after_ms) == (0, 0)
    # And a failure that any fault explains shrinks to a deterministic named crash point.
    any_fault = find(chaos_specs(NAIVE, max_faults=3, timed=True), lambda s: bool(s.extra_faults), settings=quiet)
    assert not has_timed(any_fault)


def test_the_watcher_kills_its_process_group_after_the_planned_ms(tmp_path: Path) -> None:
    """A real child process in its own session runs the watcher; offsets/0 exists before it starts (so it
    never starts a clock), offsets/1 appears later and the child must die by SIGKILL ~300 ms after that."""
    faults, checkpoint = tmp_path / "faults", tmp_path / "checkpoint"
    for d in (faults, checkpoint / "offsets", checkpoint / "commits"):
        d.mkdir(parents=True)
    (checkpoint / "offsets" / "0").write_text("v1\n")
    plan = FaultPlan((FaultRule("t0", TIMED_POINT, 0, after_ms=0), FaultRule("t1", TIMED_POINT, 1, after_ms=300)))
    plan.save(faults / PLAN_FILE)
    written: list[int] = []

    def write_offsets_1(ck: Path) -> None:  # offsets/0 existed before the watcher started: it never starts a clock
        written.append(time.time_ns())
        (ck / "offsets" / "1").write_text("v1\n")

    run_watcher(faults, checkpoint, lambda ck: None, write_offsets_1)
    died_ms = (time.time_ns() - written[0]) / 1e6
    (record,) = read_ledger(faults)
    ctx = record["context"]
    assert record["rule"]["id"] == "t1" and record["batch"] == 1
    assert ctx["planned_ms"] == 300 and 300 <= ctx["measured_ms"] < 300 + 250, ctx
    assert died_ms >= 300
    assert (ctx["latest_offsets"], ctx.get("latest_commit"), ctx["via"]) == (1, None, "timer")
    assert ctx["description"].startswith("landed ") and "batch 1 not committed yet" in ctx["description"]
    assert sorted(os.listdir(faults / FIRED_DIR)) == ["t1.0"]
