"""docs/scenarios.md's catalogue is generated from the library (harness/cli/catalogue.py), and its table of how
each scenario was built and measured names exactly the registered scenarios: neither can drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.cli.catalogue import BEGIN, COMMAND, END, PAGE, main, render, table
from scenarios import all_scenarios
from scenarios.library.file_sink_stateless import SCENARIO as FILE_SINK

pytestmark = pytest.mark.unit


def _block(page: str) -> str:
    return page[page.index(BEGIN) + len(BEGIN) : page.index(END)]


def test_the_committed_catalogue_is_the_generated_one() -> None:
    page = PAGE.read_text()
    assert page == render(page, all_scenarios()), f"the catalogue differs from the code; regenerate it: {COMMAND}"
    assert main(["--check"]) == 0


def test_every_registered_scenario_has_one_row_from_its_own_fields() -> None:
    block = _block(PAGE.read_text())
    for name, sc in all_scenarios().items():
        rows = [line for line in block.splitlines() if line.startswith(f"| `{name}` |")]
        assert len(rows) == 1, name
        assert f"| {sc.guarantee} |" in rows[0] and " ".join(sc.summary.split()) in rows[0].replace("\\|", "|")


def test_the_measured_table_names_exactly_the_registered_scenarios() -> None:
    """The prose table (oracle, measured time) is kept by hand: a scenario added, renamed or removed fails here."""
    page = PAGE.read_text()
    section = page[page.index("### How each was built and measured") :]
    section = section[: section.index("\n## ")]
    named = re.findall(r"^\| `([a-z0-9_]+)` \|", section, re.M)
    assert len(named) == len(set(named)), "a scenario has two rows"
    assert set(named) == set(all_scenarios())


def test_check_fails_a_stale_catalogue_and_write_mends_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "scenarios.md"
    text = PAGE.read_text()
    stale = _block(text).replace(f"| `{FILE_SINK.name}` |", "| `file_sink_renamed` |")
    page.write_text(text.replace(_block(text), stale))
    monkeypatch.setattr("harness.cli.catalogue.PAGE", page)
    assert main(["--check"]) == 1
    assert main(["--write"]) == 0 and main(["--check"]) == 0
    assert page.read_text() == text


def test_a_page_without_the_markers_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "scenarios.md"
    page.write_text("# Scenario library\n\nno markers here\n")
    monkeypatch.setattr("harness.cli.catalogue.PAGE", page)
    assert main(["--write"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must each be there once" in err and "end of the generated catalogue" in err
    assert page.read_text() == "# Scenario library\n\nno markers here\n"


def test_all_nine_points_are_named_as_such_and_a_subset_is_listed() -> None:
    text = table({"a": FILE_SINK, "b": all_scenarios()["foreachbatch_sqlite_upsert"]})
    a, b = (line for line in text.splitlines() if line.startswith("| `"))
    assert "all 9" in b and "`after_offsets_logged`" in a and "all 9" not in a
