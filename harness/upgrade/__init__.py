"""Upgrade safety before a deploy: can the changed pipeline resume from this checkpoint? (``upgrade-check``)

The Spark half (:mod:`~harness.upgrade.probe`) resumes the new pipeline on copies of the checkpoint without new
data; the pure half (:mod:`~harness.upgrade.decide`) turns what Spark did into an answer naming the guide's rows.
"""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "Answer": ("harness.upgrade.decide", "Answer"),
    "Finding": ("harness.upgrade.decide", "Finding"),
    "decide": ("harness.upgrade.decide", "decide"),
    "NewPipeline": ("harness.upgrade.pipeline", "NewPipeline"),
    "PipelineError": ("harness.upgrade.pipeline", "PipelineError"),
    "load_pipeline": ("harness.upgrade.pipeline", "load_pipeline"),
    "Probe": ("harness.upgrade.probe", "Probe"),
    "ProbeError": ("harness.upgrade.probe", "ProbeError"),
    "probe": ("harness.upgrade.probe", "probe"),
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
