"""The command line (``python -m harness``): ``run``, ``list``, ``chaos``, ``replay``, ``census``, ``inspect``,
``bench`` and the conformance kit's commands.
"""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "build_parser": ("harness.cli.main", "build_parser"),
    "main": ("harness.cli.main", "main"),
}

__all__ = [
    "build_parser",
    "main",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
