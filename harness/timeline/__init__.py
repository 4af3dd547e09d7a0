"""Timelines of runs: a run directory's story (drivers, data, batches, kills, anomalies), drawn as inline SVG and
written as a self-contained HTML page (``run --html``, ``replay --html``, chaos bundles, ``certify --html``)."""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "Timeline": ("harness.timeline.story", "Timeline"),
    "build_timeline": ("harness.timeline.story", "build_timeline"),
    "run_page": ("harness.timeline.page", "run_page"),
    "timeline_svg": ("harness.timeline.svg", "timeline_svg"),
    "write_outcome_page": ("harness.timeline.page", "write_outcome_page"),
    "write_run_page": ("harness.timeline.page", "write_run_page"),
}

__all__ = ["Timeline", "build_timeline", "run_page", "timeline_svg", "write_outcome_page", "write_run_page"]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
