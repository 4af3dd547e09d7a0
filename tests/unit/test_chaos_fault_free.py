"""A campaign's minimal failure checked without its faults (harness.chaos.faultfree): which schedules can be
run so, and what the report says when the fault was not the cause."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import harness.chaos.faultfree as faultfree
from fault_injectors.plan import FaultRule
from harness.chaos.faultfree import fault_free_bundle, without_faults
from harness.chaos.profiles import get_profile
from harness.chaos.result import CampaignResult, ExampleRecord, campaign_doc
from harness.engine.commandline import harness_prefix, shell_line
from harness.engine.spec import RunSpec
from tests.admission import needs_admission_control

pytestmark = pytest.mark.unit
#: How the harness is started here (``.venv/bin/python -m harness`` from a clone).
HARNESS = shell_line(harness_prefix())

RAISE = FaultRule("h1", "sink.commit.after", 0, action="raise")


def test_the_fault_free_twin_drops_faults_and_nemesis_and_keeps_the_rest() -> None:
    spec = RunSpec("foreachbatch_delta_upsert_split", 3, kills=0, rows=((1, 2),), extra_faults=(RAISE,), nemesis=("x",))
    free = without_faults(spec)
    assert free is not None and (free.extra_faults, free.nemesis, free.kills) == ((), (), 0)
    assert (free.scenario, free.seed, free.rows) == (spec.scenario, spec.seed, spec.rows)
    assert free.effective_rounds == spec.effective_rounds


@pytest.mark.parametrize(
    "spec",
    [
        RunSpec("s", 1, kills=0),  # nothing to take away
        RunSpec("s", 1, kills=0, extra_faults=(RAISE,), fault_plan="plan.json"),  # faults in a file
        RunSpec("s", 1, kills=3, extra_faults=(RAISE,)),  # seeded kills: not a campaign's spec
        RunSpec("s", 1, kills=0, extra_faults=(RAISE,), upgrade_to="m:V2"),  # the deploy may be a fault's
    ],
)
def test_schedules_that_cannot_run_without_their_faults_are_not_tried(spec: RunSpec, tmp_path: Path) -> None:
    assert without_faults(spec) is None
    # Nothing is run: no pool is needed (None would fail the runner).
    assert fault_free_bundle(spec, tmp_path, None, lambda o: True) is None  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


@needs_admission_control
def test_the_report_says_when_no_fault_is_needed(tmp_path: Path) -> None:
    spec = RunSpec("foreachbatch_delta_upsert_split", 0, kills=0, rows=((1, 2),), extra_faults=(RAISE,))
    result = CampaignResult("foreachbatch_delta_upsert_split", "violated", 1, get_profile("ci"))
    result.failure = ExampleRecord(1, spec, "violated", {"lost": 1}, [], 1.0, "exactly-once violated: 1 lost")
    assert "without faults" not in result.render()
    assert campaign_doc(result)["fault_free_bundle"] is None
    result.fault_free = tmp_path / "bundle-fault-free"
    text = result.render()
    assert "without faults    violated too: no fault is needed" in text
    assert campaign_doc(result)["fault_free_bundle"] == str(result.fault_free.resolve())
    assert f"fault-free replay {HARNESS} replay {result.fault_free}" in text


SPLIT = RunSpec("foreachbatch_delta_upsert_split", 0, kills=0, rows=((1, 2),), extra_faults=(RAISE,))


@pytest.mark.parametrize(
    ("verdict", "error", "bundled", "kept", "said"),
    [
        ("violated", None, True, True, False),  # no fault needed: bundled (write_bundle copies the run)
        ("exactly-once", None, False, False, False),  # the fault is needed: the run is removed
        ("violated", "driver died\ntrace", False, True, True),  # no verdict: kept, and said where
    ],
)
def test_the_fault_free_run_decides_bundle_removal_or_keeping(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    verdict: str,
    error: str | None,
    bundled: bool,
    kept: bool,
    said: bool,
) -> None:
    ran: list[RunSpec] = []

    class FakeRunner:
        def __init__(self, spec: RunSpec, paths: Any, **_: Any) -> None:
            ran.append(spec)
            self.paths = paths

        def execute(self) -> Any:
            self.paths.root.mkdir(parents=True)
            return SimpleNamespace(verdict=verdict, error=error, paths=self.paths)

    monkeypatch.setattr(faultfree, "Runner", FakeRunner)
    monkeypatch.setattr(faultfree, "to_json", lambda outcome: {})
    monkeypatch.setattr(faultfree, "write_bundle", lambda outcome, dest, report: dest)
    lines: list[str] = []
    got = fault_free_bundle(SPLIT, tmp_path, None, lambda o: o.verdict == "violated", lines.append)  # type: ignore[arg-type]
    assert [s.extra_faults for s in ran] == [()]
    assert got == (tmp_path / "bundle-fault-free" if bundled else None)
    assert (tmp_path / "fault-free").exists() == kept
    assert bool(lines) == said and all("driver died" in line and "fault-free" in line for line in lines)
