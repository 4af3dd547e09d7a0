"""Hypothesis's own shrink limit gives way to the campaign's budget (harness/chaos/shrinkcap.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import engine
from hypothesis.reporting import with_reporter

from harness.chaos.shrinkcap import MARGIN_S, shrink_cap

pytestmark = pytest.mark.unit


def _shrunk_to(reports: list[str]) -> int:
    """Run a failing property (any list with a value >= 10) and return the value its shrunk example holds."""
    found: list[int] = []

    @settings(database=None, derandomize=True, max_examples=200)
    @given(st.lists(st.integers(0, 1000), min_size=1))
    def prop(xs: list[int]) -> None:
        if max(xs) >= 10:
            found.append(max(xs))
            raise AssertionError

    with with_reporter(lambda m: reports.append(str(m))), pytest.raises(AssertionError):
        prop()
    return found[-1]


def test_the_budget_not_hypothesis_decides_when_shrinking_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    # Hypothesis's limit already spent when shrinking starts: it stops at once, with its warning.
    monkeypatch.setattr(engine, "MAX_SHRINKING_SECONDS", 0)
    reports: list[str] = []
    _shrunk_to(reports)
    assert any("PLEASE REPORT THIS" in r for r in reports)
    # Under the campaign's budget it shrinks to the minimal example, without the warning.
    reports = []
    with shrink_cap(30):
        assert engine.MAX_SHRINKING_SECONDS == 30 + MARGIN_S
        assert _shrunk_to(reports) == 10
    assert not any("PLEASE REPORT THIS" in r for r in reports), reports
    assert engine.MAX_SHRINKING_SECONDS == 0  # restored


def test_a_larger_limit_of_hypothesis_is_kept() -> None:
    before = engine.MAX_SHRINKING_SECONDS
    with shrink_cap(1):
        assert max(before, 1 + MARGIN_S) == engine.MAX_SHRINKING_SECONDS
    assert before == engine.MAX_SHRINKING_SECONDS
