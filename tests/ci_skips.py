"""A CI run never passes by skipping a real component (a pytest plugin, loaded by the root ``conftest.py``).

A test whose server or tool is missing (PostgreSQL, headless Chromium, java) skips with a reason made by
:func:`missing`. Under ``CI=true`` such a skip is turned into a failure that keeps the reason, so a CI job
cannot go green without the component; skips by design (opt-in tiers, root permissions) stay skips.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

PREFIX = "missing component: "


def missing(reason: str) -> str:
    """The skip reason for a test that cannot run because a component is absent."""
    return PREFIX + reason


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr: Any = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr or "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not (report.skipped and os.environ.get("CI") == "true"):
        return
    reason = _skip_reason(report)
    if PREFIX in reason:
        report.outcome = "failed"
        report.longrepr = (
            f"CI=true: this test skipped because a component is missing, and a CI run may not pass by skipping "
            f"it. {reason[reason.index(PREFIX) :]} (.ci/run installs what the image lacks)"
        )
