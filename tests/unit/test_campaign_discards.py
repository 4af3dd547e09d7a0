"""A campaign over runs that are faked (pure logic of ``run_campaign``): an example whose nemesis found
nothing to damage is discarded, not a harness failure, and a harness failure while a found violation is being
shrunk leaves that violation reported, not a Hypothesis "flaky" traceback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.chaos import campaign
from harness.chaos.profiles import get_profile
from harness.engine.between import inapplicable
from harness.engine.outcome import RunOutcome
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.verdict.checker import Anomaly, CheckResult

pytestmark = pytest.mark.unit


class _Pool:
    incarnations = 0

    def close(self) -> None:
        pass


def _runner(judge: Any) -> type:
    class FakeRunner:
        def __init__(self, spec: RunSpec, paths: RunPaths, echo: Any = None, pool: Any = None) -> None:
            self.spec, self.paths = spec, paths

        def execute(self) -> RunOutcome:
            self.paths.create()
            outcome = RunOutcome(self.spec, self.paths, "exactly-once", [], [])
            verdict = judge(self.spec)
            if verdict == "violated":
                lost = Anomaly("lost", 0, 0, 3, 0, 1, 0, {"partition": 0, "offset": 3})
                outcome.result = CheckResult(False, [lost], 10, 9)
            elif verdict == "ok":
                outcome.result = CheckResult(True, [], 10, 10)
            else:
                outcome.error = verdict
            return outcome

    return FakeRunner


class _Census:
    """Step censuses without runs: every batch's sink function takes three steps."""

    def __init__(self, *args: Any) -> None:
        self.runs, self.seconds, self.seen = 0, 0.0, set[tuple[int, str]]()

    def has(self, seed: int, rows: Any, batch_rows: int | None = None) -> bool:
        return (seed, repr(rows)) in self.seen

    def __call__(self, seed: int, rows: Any, batch_rows: int | None = None) -> dict[int, list[Any]]:
        self.seen.add((seed, repr(rows)))
        return {b: [("foreach_batch", None, (1, 2, 3))] for b in range(12)}


def _campaign(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    judge: Any,
    nemesis: tuple[str, ...] = (),
    scenario: str = "file_sink_stateless",
) -> Any:
    monkeypatch.setattr(campaign, "Runner", _runner(judge))
    monkeypatch.setattr(campaign, "CensusCache", _Census)
    said: list[str] = []
    result = campaign.run_campaign(
        scenario,
        seed_value=3,
        profile=get_profile("dev").with_examples(25),
        work_dir=tmp_path,
        echo=said.append,
        nemesis=nemesis,
        pool=_Pool(),  # type: ignore[arg-type]
    )
    return result, said


def _batches(spec: RunSpec) -> list[int]:
    return [r.batch for r in spec.extra_faults if r.batch is not None]


@pytest.mark.parametrize("scenario", ["file_sink_stateless", "foreachbatch_sqlite_upsert"])  # census: the 2nd
def test_a_harness_failure_while_shrinking_leaves_the_violation_found(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, scenario: str
) -> None:
    found: list[RunSpec] = []
    broke: list[RunSpec] = []

    # A violation needs two faults, so that shrinking tries one: drawn on every release (before 4.2 a Python
    # source's round is one batch, so a schedule rarely reaches batch 2).
    def judge(spec: RunSpec) -> str:  # a violation with two faults or more; a harness failure once shrinking
        batches = _batches(spec)
        if len(batches) >= 2:
            found.append(spec)
            return "violated"
        if found:
            broke.append(spec)
            return "the harness broke"
        return "ok"

    result, said = _campaign(monkeypatch, tmp_path, judge, scenario=scenario)
    assert broke, "no harness failure while shrinking: the test proves nothing"
    assert result.failure is not None and result.failure.verdict == "violated", said
    assert len(_batches(result.failure.spec)) >= 2 and result.bundle is not None
    assert any(line.startswith("shrinking stopped early: a harness failure") for line in said), said


def test_an_inapplicable_nemesis_discards_the_example(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def judge(spec: RunSpec) -> str:
        return inapplicable(spec.nemesis[0], "nothing to damage") if spec.nemesis else "ok"

    result, said = _campaign(monkeypatch, tmp_path, judge, ("delete_middle_commit",))
    assert result.error is None and result.failure is None, result.error
    discarded = [line for line in said if "discarded: nemesis delete_middle_commit could not be applied" in line]
    assert discarded and len(result.examples) > len(discarded), said
