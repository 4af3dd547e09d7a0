"""The example table (``tests/example_table.py``) against the Spark-free checks: every example source's status
for each of the eleven Spark-free source checks, and every ``DataSource`` sink's status for the five protocol
checks, is the one the table pins. The table itself is mutation-sensitive: for every check at least one example
must pass it and one must fail it, so a check made to always pass (a miss on a broken example) or to always fail
(a false alarm on a correct one) breaks this test."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

import pytest

import examples.connectors
from harness.conformance import check_sink
from harness.conformance.results import ConformanceReport
from harness.conformance.source.suite import SOURCE_CHECK_IDS, check_source
from harness.sources.loading import add_import_root
from tests.admission import needs_admission_control
from tests.example_table import (
    PURE_SOURCE_CHECKS,
    SOURCES,
    SPARK_SOURCE_CHECKS,
    SourceRow,
    definite,
    matches,
    mismatches,
)
from tests.example_table_sinks import GUARANTEE, PROTOCOL_SINK_CHECKS, SINKS, SinkRow

ROOT = Path(__file__).resolve().parents[2]


def load(ref: str) -> Any:
    module, attr = ref.split(":")
    return getattr(importlib.import_module(module), attr)


def statuses(report: ConformanceReport) -> dict[str, str]:
    return {c.id: c.status for c in report.checks}


def run_source(row: SourceRow, tmp_path: Path) -> ConformanceReport:
    add_import_root(str(ROOT))  # child processes import the examples by module name
    context = load(row.context) if row.context else None
    return check_source(
        load(row.source), row.options(), context, workdir=tmp_path, end_to_end=False, echo=lambda m: None
    )


@needs_admission_control
@pytest.mark.parametrize("row", SOURCES, ids=[r.name for r in SOURCES])
def test_source_statuses_are_the_tables(row: SourceRow, tmp_path: Path) -> None:
    report = run_source(row, tmp_path)
    actual = statuses(report)
    bad = mismatches(row.expect, actual, PURE_SOURCE_CHECKS)
    assert not bad, f"{row.name}: " + "; ".join(bad) + "\n" + report.render_text()
    assert all(actual[c] == "skip" for c in SPARK_SOURCE_CHECKS)
    pinned_fail = any(row.expect[c] == "fail" for c in PURE_SOURCE_CHECKS)
    assert report.exit_code == (1 if pinned_fail else 0), report.render_text()


def _protocol_guarantee(row: SinkRow) -> str:
    """``declared-guarantee`` from the protocol checks alone: it fails when one of them fails."""
    return "fail" if any(row.expect[c] == "fail" for c in PROTOCOL_SINK_CHECKS) else "pass"


DATASOURCE_SINKS = [r for r in SINKS if r.protocol]


@pytest.mark.parametrize("row", DATASOURCE_SINKS, ids=[r.name for r in DATASOURCE_SINKS])
def test_sink_protocol_statuses_are_the_tables(row: SinkRow, tmp_path: Path) -> None:
    report = check_sink(
        load(row.target), load(row.read_back), workdir=tmp_path, crash_points=False, echo=lambda m: None
    )
    actual = statuses(report)
    bad = mismatches(row.expect, actual, PROTOCOL_SINK_CHECKS)
    assert not bad, f"{row.name}: " + "; ".join(bad) + "\n" + report.render_text()
    assert actual[GUARANTEE] == _protocol_guarantee(row), report.render_text()


def test_every_example_module_has_a_row() -> None:
    """A new example must be added to the table (a source or a sink row naming its module)."""
    named = {ref.split(":")[0] for r in SOURCES for ref in (r.source,)} | {r.target.split(":")[0] for r in SINKS}
    modules = {
        f"examples.connectors.{m.name}"
        for m in pkgutil.iter_modules(examples.connectors.__path__)
        if not m.name.startswith("_")
    }
    assert sorted(modules - named) == []


def test_every_row_pins_every_check() -> None:
    from harness.conformance.sink.checks import PROTOCOL_CHECK_IDS
    from harness.conformance.source.checks import PURE_CHECKS

    # The tables' own lists of the Spark-free checks are the kit's: a new check cannot go unpinned.
    assert tuple(PURE_CHECKS) == PURE_SOURCE_CHECKS and tuple(PROTOCOL_CHECK_IDS) == PROTOCOL_SINK_CHECKS
    for row in SOURCES:
        assert set(row.expect) == set(SOURCE_CHECK_IDS), row.name
    for sink in SINKS:
        assert set(sink.expect) == {*PROTOCOL_SINK_CHECKS, GUARANTEE, "crash-points", "crash-anywhere"}, sink.name


@needs_admission_control
def test_correct_examples_expect_no_failure_and_broken_ones_name_their_checks() -> None:
    """A correct row allows no ``fail`` anywhere; a broken row pins at least one ``fail``, and its module
    docstring names a check the table expects it to fail without Spark (or, if Spark alone catches it, a
    Spark-backed check it fails): the check meant for its bug."""
    for row in SOURCES:
        fails = [c for c in PURE_SOURCE_CHECKS if row.expect[c] == "fail"]
        fails = fails or [c for c in SPARK_SOURCE_CHECKS if row.expect[c] == "fail"][-1:]
        if row.correct:
            assert not any(matches(e, "fail") for e in row.expect.values() if e is not None), row.name
        else:
            assert fails, row.name
            doc = importlib.import_module(row.source.split(":")[0]).__doc__ or ""
            assert any(c in doc for c in fails), f"{row.name}: the docstring names none of {fails}"


#: Checks of habits correct sources may have: ``pass`` or ``note``, never ``fail`` (Spark's contract only).
HABIT_CHECKS = ("initial-offset-stable", "latest-offset-stable")


def rejecting(rows: tuple[SourceRow, ...] | tuple[SinkRow, ...], check: str, status: str) -> list[str]:
    """Rows whose cell for ``check`` does not allow ``status``: a check forced to give ``status`` breaks them."""
    return [r.name for r in rows if r.expect[check] is not None and not matches(r.expect[check], status)]


@pytest.mark.parametrize("check", PURE_SOURCE_CHECKS)
def test_table_is_mutation_sensitive_for_source_checks(check: str) -> None:
    """Making ``check`` always pass misses a broken example (or a habit's note); making it always fail rejects
    a correct one. A contract check has an example pinned to fail it; a habit check one pinned to note."""
    assert rejecting(SOURCES, check, "pass"), f"no row rejects {check} = pass: always-pass would go unnoticed"
    assert rejecting(SOURCES, check, "fail"), f"no row rejects {check} = fail: always-fail would go unnoticed"
    assert definite(SOURCES, check, "pass")
    assert definite(SOURCES, check, "note" if check in HABIT_CHECKS else "fail")
    if check in HABIT_CHECKS:
        assert not definite(SOURCES, check, "fail"), f"{check} judges a habit: never a failure"


@pytest.mark.parametrize("check", PROTOCOL_SINK_CHECKS)
def test_table_is_mutation_sensitive_for_sink_protocol_checks(check: str) -> None:
    assert definite(tuple(DATASOURCE_SINKS), check, "pass"), check
    assert definite(tuple(DATASOURCE_SINKS), check, "fail"), check


@pytest.mark.parametrize("forced", ["pass", "fail"])
def test_a_forced_check_breaks_the_table(forced: str) -> None:
    """The comparison the tests above make: with any one check's status forced on every row (the observed
    statuses otherwise being the table's own definite ones), some row no longer matches."""
    for check in PURE_SOURCE_CHECKS:
        broken = []
        for row in SOURCES:
            observed = {c: e for c, e in row.expect.items() if isinstance(e, str)}
            observed[check] = forced
            broken += mismatches(row.expect, observed, (check,))
        assert broken, f"forcing {check} to {forced} goes unnoticed"
