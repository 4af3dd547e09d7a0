"""The pytest plugin's parts (:mod:`harness.pytest_plugin` is its entry point): its settings from the ini file
and the command line, and how a failure is kept for the next run and for the person reading it."""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "MISSING_PREFIX": ("harness.plugin.settings", "MISSING_PREFIX"),
    "keep_failure": ("harness.plugin.failures", "keep_failure"),
    "missing_component": ("harness.plugin.settings", "missing_component"),
}

__all__ = [
    "MISSING_PREFIX",
    "keep_failure",
    "missing_component",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
