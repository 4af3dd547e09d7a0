"""The connector checks' registry (harness/conformance/checkdocs.py): the kit's checks in their order, each
Spark-free one judged by the function its row names, and docs/conformance.md's tables written from it
(harness/cli/checkref.py), so the page cannot drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli.checkref import COMMAND, PAGE, main, render
from harness.conformance.checkdocs import SINK_CHECKS, SOURCE_CHECKS, judges
from harness.conformance.sink.suite import ANYWHERE_ID, CRASH_ID, GUARANTEE_ID, SINK_CHECK_IDS
from harness.conformance.source.suite import BEHIND_ID, E2E_ID, SOURCE_CHECK_IDS

pytestmark = pytest.mark.unit


def test_the_committed_page_is_the_generated_one() -> None:
    assert PAGE.read_text() == render(), f"{PAGE.name} differs from the code; regenerate it: {COMMAND}"
    assert main(["--check"]) == 0


def test_the_registry_is_the_kits_checks_in_their_order() -> None:
    assert all(c.clause for c in SOURCE_CHECKS) and not any(c.clause for c in SINK_CHECKS)
    assert len({c.id for c in (*SOURCE_CHECKS, *SINK_CHECKS)}) == len(SOURCE_CHECKS) + len(SINK_CHECKS)
    # The checks without a judgement are those each suite runs with Spark, after the Spark-free ones.
    assert [c.id for c in SOURCE_CHECKS if not c.judge] == [E2E_ID, BEHIND_ID] == list(SOURCE_CHECK_IDS[-2:])
    assert [c.id for c in SINK_CHECKS if not c.judge] == [CRASH_ID, ANYWHERE_ID, GUARANTEE_ID]
    assert list(SINK_CHECK_IDS[-3:]) == [CRASH_ID, ANYWHERE_ID, GUARANTEE_ID]


def test_every_judgement_resolves_to_a_function_of_its_kit() -> None:
    for checks, package in ((SOURCE_CHECKS, "harness.conformance.source."), (SINK_CHECKS, "harness.conformance.sink.")):
        found = judges(checks)
        assert list(found) == [c.id for c in checks if c.judge]
        for c in checks:
            if c.judge:
                assert callable(found[c.id]) and c.judge.startswith(package), c.judge
                assert found[c.id].__name__ == c.judge.rsplit(":", 1)[1], c.judge


def test_an_outcome_a_check_returns_is_reported_under_the_registrys_id() -> None:
    from harness.conformance.results import CheckOutcome, run_check

    out = run_check("task-retry", lambda: CheckOutcome("a-stale-id", "fail", "lost rows"))
    assert (out.id, out.status, out.summary) == ("task-retry", "fail", "lost rows")


def test_the_page_has_one_row_per_check() -> None:
    page = PAGE.read_text()
    for check in (*SOURCE_CHECKS, *SINK_CHECKS):
        assert len(re.findall(rf"^\| `{re.escape(check.id)}` \|", page, re.M)) == 1, check.id


def test_check_fails_a_stale_page_and_write_mends_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import checkref

    stale = tmp_path / "conformance.md"
    stale.write_text(PAGE.read_text().replace("| `task-retry` | a task attempt", "| `task-retry` | an attempt", 1))
    monkeypatch.setattr(checkref, "PAGE", stale)
    assert checkref.main(["--check"]) == 1
    assert checkref.main(["--write"]) == 0 and stale.read_text() == PAGE.read_text()


def test_a_page_without_its_markers_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import checkref

    bare = tmp_path / "conformance.md"
    bare.write_text(PAGE.read_text().replace("<!-- end of sink checks -->", ""))
    monkeypatch.setattr(checkref, "PAGE", bare)
    assert checkref.main(["--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "end of sink checks" in err


def test_a_marker_quoted_twice_is_refused_rather_than_prose_overwritten() -> None:
    from harness.cli.checkref import SINK_MARKERS
    from harness.cli.generated import replace_between

    start, end = SINK_MARKERS
    page = f"intro\n{start}\nold\n{end}\nprose\n"
    assert replace_between(page, SINK_MARKERS, "new") == f"intro\n{start}\nnew\n{end}\nprose\n"
    with pytest.raises(ValueError, match="must each be there once"):
        replace_between(f"quoted {start}\n{page}", SINK_MARKERS, "new")
    with pytest.raises(ValueError, match="comes before"):
        replace_between(f"{end}\n{start}\n", SINK_MARKERS, "new")
