"""A scenario's input, and how the harness drives a user's Python source.

- :class:`SourceSpec` and its kinds: :class:`Replayable` (the default, optionally with a user's
  :class:`Rows`), :class:`FileDirectory` (Spark's file source) and :class:`PythonSource` (a user's
  ``DataSource`` fed through its context factory).
- :mod:`.contexts`: the context protocol a connector author implements to feed test data.
- :mod:`.loading`: naming a connector as ``path.py:Name`` or ``module:Name``.
- :mod:`.reader`: driving a Python stream reader directly, without Spark (the oracle and the kit).
"""

from __future__ import annotations

from harness.sources.contexts import NullContext, SourceContext
from harness.sources.python import PythonSource
from scenarios.sources import FileDirectory, Replayable, SourceRun, SourceSpec
from scenarios.userrows import Rows

__all__ = [
    "FileDirectory",
    "NullContext",
    "PythonSource",
    "Replayable",
    "Rows",
    "SourceContext",
    "SourceRun",
    "SourceSpec",
]
