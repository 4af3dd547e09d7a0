"""Connector conformance kit: checks for Python streaming sources and sinks, and certify (documented vs
measured guarantees of Spark's built-ins). See docs/conformance.md and docs/certify.md.

One subpackage per product, on the shared vocabulary at the top (``results``: statuses, :class:`CheckOutcome`,
:class:`ConformanceReport`; ``guarantees``: the guarantee lattice; ``raised``: the subject's exception found in
Spark's report), behind two front ends (``cli``: ``python -m harness check-source|check-sink|certify``;
``pytest_kit``: the pytest base classes ``SourceConformance`` and ``SinkConformance``):

- :mod:`harness.conformance.source`: a source check runs probe -> checks -> e2e -> campaign;
- :mod:`harness.conformance.sink`: a sink check runs checks (a simulated task) -> crash points -> crash anywhere;
- :mod:`harness.conformance.certify.command`: Spark's built-in sources and sinks, measured on the same runs.

Importing this package imports none of its modules (no pyspark): each name below is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._lazy import lazy_exports

if TYPE_CHECKING:
    from harness.conformance.certify.command import run_certify
    from harness.conformance.guarantees import AT_LEAST_ONCE, AT_MOST_ONCE, EXACTLY_ONCE, NONE
    from harness.conformance.results import CheckOutcome, ConformanceReport
    from harness.conformance.sink.scenario import scenario_for
    from harness.conformance.sink.suite import SINK_CHECK_IDS, check_sink
    from harness.conformance.source.suite import SOURCE_CHECK_IDS, check_source
    from harness.sources.contexts import NullContext, ReplayableContext, SourceContext, replayable_context

#: Public name -> (module, attribute).
_EXPORTS = {
    "AT_LEAST_ONCE": ("harness.conformance.guarantees", "AT_LEAST_ONCE"),
    "AT_MOST_ONCE": ("harness.conformance.guarantees", "AT_MOST_ONCE"),
    "EXACTLY_ONCE": ("harness.conformance.guarantees", "EXACTLY_ONCE"),
    "NONE": ("harness.conformance.guarantees", "NONE"),
    "SINK_CHECK_IDS": ("harness.conformance.sink.suite", "SINK_CHECK_IDS"),
    "SOURCE_CHECK_IDS": ("harness.conformance.source.suite", "SOURCE_CHECK_IDS"),
    "CheckOutcome": ("harness.conformance.results", "CheckOutcome"),
    "ConformanceReport": ("harness.conformance.results", "ConformanceReport"),
    "NullContext": ("harness.sources.contexts", "NullContext"),
    "ReplayableContext": ("harness.sources.contexts", "ReplayableContext"),
    "SourceContext": ("harness.sources.contexts", "SourceContext"),
    "check_sink": ("harness.conformance.sink.suite", "check_sink"),
    "check_source": ("harness.conformance.source.suite", "check_source"),
    "replayable_context": ("harness.sources.contexts", "replayable_context"),
    "run_certify": ("harness.conformance.certify.command", "run_certify"),
    "scenario_for": ("harness.conformance.sink.scenario", "scenario_for"),
}

__all__ = [
    "AT_LEAST_ONCE",
    "AT_MOST_ONCE",
    "EXACTLY_ONCE",
    "NONE",
    "SINK_CHECK_IDS",
    "SOURCE_CHECK_IDS",
    "CheckOutcome",
    "ConformanceReport",
    "NullContext",
    "ReplayableContext",
    "SourceContext",
    "check_sink",
    "check_source",
    "replayable_context",
    "run_certify",
    "scenario_for",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
