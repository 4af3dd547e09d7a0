"""The pytest base classes report each check as its own test: passed, failed with
evidence and fix, or skipped with the reason (run with pytester, no Spark)."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest

from tests.admission import needs_admission_control

pytest_plugins = ["pytester"]

BROKEN_SUITE = """
from examples.connectors._jsonl import log_context
from examples.connectors.overlapping_partitions import OverlappingPartitionsSource
from harness.conformance.pytest_kit import SourceConformance


class TestOverlapping(SourceConformance):
    source = OverlappingPartitionsSource
    context = log_context
    end_to_end = False
"""

MISCONFIGURED = """
from harness.conformance.pytest_kit import SinkConformance


class TestNothing(SinkConformance):
    pass
"""


@needs_admission_control
def test_broken_source_fails_exactly_its_checks(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_broken=BROKEN_SUITE)
    xml = pytester.path / "out.xml"
    result = pytester.runpytest_inprocess("-rfs", "-p", "no:cacheprovider", f"--junitxml={xml}")
    result.assert_outcomes(passed=8, failed=1, skipped=5)
    out = result.stdout.str()
    assert "FAILED test_broken.py::TestOverlapping::test_check[ranges-contiguous]" in out
    # Its default read limit is ReadAllAvailable: Spark never limits it, so admission control is not judged.
    assert "admission-control: getDefaultReadLimit() is ReadAllAvailable, so Spark never passes" in out
    assert "ranges-contiguous fail: consecutive offset ranges overlap or leave gaps" in out
    assert "fix: each partition must cover [start, end) exactly" in out
    assert "end-to-end: Spark-backed check disabled" in out
    assert "chaos: opt-in, set chaos_examples = N on the class" in out
    # Every kit test carries its subject, check, status and replay command into the JUnit XML.
    cases = {c.get("name"): c for c in ElementTree.parse(xml).getroot().iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["test_check[ranges-contiguous]"].iter("property")}
    assert props["check"] == "ranges-contiguous" and props["status"] == "fail" and props["profile"] == "conformance"
    assert props["subject"] == "examples.connectors.overlapping_partitions:OverlappingPartitionsSource"
    assert props["replay"] == "pytest 'test_broken.py::TestOverlapping::test_check[ranges-contiguous]'"
    assert len(cases) == 14 and all(c.find("properties") is not None for c in cases.values())


def test_missing_attributes_fail_with_a_message(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_nothing=MISCONFIGURED)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*set the class attributes 'sink' and 'read_back'*"])
