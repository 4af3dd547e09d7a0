"""Connector conformance kit: checks for Python streaming sources and sinks.

See docs/conformance.md. Entry points: :func:`check_source`, the CLI
``python -m harness check-source|check-sink|certify``, and the pytest base
classes in :mod:`harness.conformance.pytest_kit`.
"""

from __future__ import annotations

from harness.conformance.contexts import NullContext, ReplayableContext, SourceContext, replayable_context
from harness.conformance.results import CheckResult, ConformanceReport
from harness.conformance.source_suite import SOURCE_CHECK_IDS, check_source

__all__ = [
    "SOURCE_CHECK_IDS",
    "CheckResult",
    "ConformanceReport",
    "NullContext",
    "ReplayableContext",
    "SourceContext",
    "check_source",
    "replayable_context",
]
