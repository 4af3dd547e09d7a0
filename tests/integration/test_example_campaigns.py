"""Every correct example source of the table holds a 10-example chaos campaign (issue 25 point 5): the
false-alarm rate of the campaign machinery, measured on subjects that were not written for it. Sources with
a context get drawn rounds of data; context-less ones (the per-call counter, the clock-driven source, the
rate-like source) get drawn batches per round. Heavy tier: about 1-7 min each (times in the docs)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.chaos.profiles import get_profile
from harness.conformance.source.campaign import run_source_campaign
from harness.conformance.source.schedule import SourceSubject
from tests.example_table import SOURCES, SourceRow
from tests.integration.clirun import leftover_processes

pytestmark = [pytest.mark.spark, pytest.mark.heavy]
CORRECT = [pytest.param(r, id=r.name) for r in SOURCES if r.correct]


@pytest.mark.parametrize("row", CORRECT)
def test_correct_example_holds_ten_examples(row: SourceRow, tmp_path: Path) -> None:
    subject = SourceSubject(row.source, row.context, row.options())
    profile = dataclasses.replace(get_profile("ci"), examples=10)
    result = run_source_campaign(subject, seed_value=1, profile=profile, work_dir=tmp_path / "w", echo=print)
    assert result.error is None and result.verdict == "exactly-once", result.render()
    assert len(result.examples) >= 5, result.render()  # Hypothesis may repeat a drawn schedule; most are new
    assert leftover_processes() == []
