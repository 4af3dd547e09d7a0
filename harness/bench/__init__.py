"""``python -m harness bench``: the harness's costs as ratios against bare Spark measured in the same run."""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "render_bench": ("harness.bench.render", "render_bench"),
    "run_bench": ("harness.bench.suite", "run_bench"),
}

__all__ = [
    "render_bench",
    "run_bench",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
