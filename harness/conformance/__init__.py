"""Connector conformance kit: checks for Python streaming sources and sinks, and
certify (documented vs measured guarantees of Spark's built-ins).

See docs/conformance.md and docs/certify.md. Entry points: :func:`check_source`,
:func:`check_sink`, the CLI ``python -m harness check-source|check-sink|certify``,
and the pytest base classes in :mod:`harness.conformance.pytest_kit`
(``SourceConformance``, ``SinkConformance``).
"""

from __future__ import annotations

from harness.conformance.guarantees import AT_LEAST_ONCE, AT_MOST_ONCE, EXACTLY_ONCE, NONE
from harness.conformance.results import CheckResult, ConformanceReport
from harness.conformance.sink_scenario import scenario_for
from harness.conformance.sink_suite import SINK_CHECK_IDS, check_sink
from harness.conformance.source_suite import SOURCE_CHECK_IDS, check_source
from harness.sources.contexts import NullContext, ReplayableContext, SourceContext, replayable_context

__all__ = [
    "AT_LEAST_ONCE",
    "AT_MOST_ONCE",
    "EXACTLY_ONCE",
    "NONE",
    "SINK_CHECK_IDS",
    "SOURCE_CHECK_IDS",
    "CheckResult",
    "ConformanceReport",
    "NullContext",
    "ReplayableContext",
    "SourceContext",
    "check_sink",
    "check_source",
    "replayable_context",
    "scenario_for",
]
