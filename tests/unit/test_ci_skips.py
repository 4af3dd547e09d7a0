"""Under CI=true a test skipped for a missing component fails with its reason; other skips stay skips."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SUITE = """
import pytest
from tests.ci_skips import missing


@pytest.mark.skipif(True, reason=missing("headless Chromium not installed"))
def test_needs_chromium():
    pass


def test_needs_postgres():
    pytest.skip(missing("PostgreSQL server binaries not found"))


@pytest.mark.skipif(True, reason="heavy tier, opt-in")
def test_by_design():
    pass


def test_runs():
    pass
"""


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str | None) -> pytest.RunResult:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    pytester.makepyfile(test_components=SUITE)
    return pytester.runpytest_inprocess("-p", "tests.ci_skips", "-p", "no:cacheprovider", "-rA")


def test_missing_components_fail_under_ci(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(pytester, monkeypatch, "true")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 1 and outcomes.get("skipped") == 1, outcomes
    assert outcomes.get("failed", 0) + outcomes.get("errors", 0) == 2, outcomes
    out = result.stdout.str()
    assert "missing component: headless Chromium not installed" in out
    assert "missing component: PostgreSQL server binaries not found" in out
    assert "a CI run may not pass by skipping it" in out
    assert result.ret == 1


def test_missing_components_skip_outside_ci(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _run(pytester, monkeypatch, None)
    result.assert_outcomes(passed=1, skipped=3)
    assert result.ret == 0
