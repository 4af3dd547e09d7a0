"""spark-exactly-once-harness: fault-tolerance and exactly-once testing for Spark Structured Streaming.

The public API, imported lazily (``import harness`` loads neither PySpark nor the engine; each name is
imported on first use, the way Hypothesis keeps its top level light)::

    from harness import RunSpec, run, check_source, check_sink, inspect_checkpoint
    outcome = run(RunSpec("file_sink_stateless", seed=3, kills=2))

- :class:`Scenario`: a pipeline under test (source, transform, sink, read-back, guarantee).
- :class:`SourceSpec`: a scenario's input: :class:`Replayable` (optionally with a user's :class:`Rows`),
  :class:`FileDirectory` (Spark's file source), :class:`PythonSource` (a user's ``DataSource``).
- :class:`RunSpec` / :func:`run`: one run (kill/restart schedule from a seed) and its outcome.
- :class:`FaultRule` / :class:`FaultPlan`: explicit faults at crash points, steps or times.
- :func:`check_source` / :func:`check_sink`: the connector conformance kits.
- :func:`inspect_checkpoint`: the checkpoint (WAL / offset log) inspector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness._lazy import lazy_exports

if TYPE_CHECKING:
    from fault_injectors.plan import FaultPlan, FaultRule
    from harness.conformance.sink.suite import check_sink
    from harness.conformance.source.suite import check_source
    from harness.engine.runner import run_spec as run
    from harness.engine.spec import RunSpec
    from harness.inspector import inspect_checkpoint
    from harness.sources import FileDirectory, PythonSource, Replayable, Rows, SourceSpec
    from scenarios.base import Scenario

#: Public name -> (module, attribute).
_EXPORTS: dict[str, tuple[str, str]] = {
    "Scenario": ("scenarios.base", "Scenario"),
    "SourceSpec": ("scenarios.sources", "SourceSpec"),
    "Replayable": ("scenarios.sources", "Replayable"),
    "FileDirectory": ("scenarios.sources", "FileDirectory"),
    "PythonSource": ("harness.sources.python", "PythonSource"),
    "Rows": ("scenarios.userrows", "Rows"),
    "RunSpec": ("harness.engine.spec", "RunSpec"),
    "run": ("harness.engine.runner", "run_spec"),
    "FaultRule": ("fault_injectors.plan", "FaultRule"),
    "FaultPlan": ("fault_injectors.plan", "FaultPlan"),
    "check_source": ("harness.conformance.source.suite", "check_source"),
    "check_sink": ("harness.conformance.sink.suite", "check_sink"),
    "inspect_checkpoint": ("harness.inspector", "inspect_checkpoint"),
}

__all__ = [
    "FaultPlan",
    "FaultRule",
    "FileDirectory",
    "PythonSource",
    "Replayable",
    "Rows",
    "RunSpec",
    "Scenario",
    "SourceSpec",
    "check_sink",
    "check_source",
    "inspect_checkpoint",
    "run",
]


__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
