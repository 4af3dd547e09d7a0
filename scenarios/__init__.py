"""The scenario framework (``Scenario``, sources, row generation, the tap, presets, shared sinks) and the
registry of the pipeline library, :mod:`scenarios.library`."""

from __future__ import annotations

import sys
from typing import Any

from scenarios.base import Scenario, SinkContext
from scenarios.rowgen import PROVENANCE, SCHEMA_DDL, ConfigError, SourceConfig
from scenarios.sources import FileDirectory, Replayable, SourceRun, SourceSpec
from scenarios.userrows import Rows

__all__ = [
    "PROVENANCE",
    "SCHEMA_DDL",
    "ConfigError",
    "FileDirectory",
    "Replayable",
    "Rows",
    "Scenario",
    "SinkContext",
    "SourceConfig",
    "SourceRun",
    "SourceSpec",
    "all_scenarios",
    "get_scenario",
]


#: The package of the built-in pipelines (``scenarios.<name>`` before they moved there).
_LIBRARY = "scenarios.library"


def _moved_module(module_name: str) -> str:
    """``scenarios.<name>`` -> ``scenarios.library.<name>`` when ``<name>`` is a pipeline of the library: the
    module path a ``module:ATTR`` reference saved before the move (in a bundle, a run spec, an example
    database's key, a script) used. Any other name is returned unchanged."""
    import importlib.util

    package, _, name = module_name.rpartition(".")
    if package != __name__ or not name or name.startswith("_"):
        return module_name
    if importlib.util.find_spec(module_name) is not None:
        return module_name
    moved = f"{_LIBRARY}.{name}"
    return moved if importlib.util.find_spec(moved) is not None else module_name


def all_scenarios() -> dict[str, Scenario]:
    """Built-in scenarios by name, sorted: every module of :mod:`scenarios.library` that defines ``SCENARIO``
    (found by scanning, so a new scenario module is registered by existing; imports pyspark)."""
    import importlib
    import pkgutil

    library = importlib.import_module(_LIBRARY)
    found: dict[str, Scenario] = {}
    for info in pkgutil.iter_modules(library.__path__):
        if info.ispkg or info.name.startswith("_"):
            continue
        scenario = getattr(importlib.import_module(f"{_LIBRARY}.{info.name}"), "SCENARIO", None)
        if isinstance(scenario, Scenario):
            if scenario.name in found:
                raise RuntimeError(f"two scenario modules define a scenario named {scenario.name!r}")
            found[scenario.name] = scenario
    return dict(sorted(found.items()))


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name``, or the ``Scenario`` object at
    ``package.module:ATTRIBUTE`` (a user's own pipeline, importable from the
    working directory); ``KeyError`` lists the known names."""
    if ":" in name:
        return _import_scenario(name)
    scenarios = all_scenarios()
    if name not in scenarios:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(sorted(scenarios))}")
    return scenarios[name]


def _import_from_here(module_name: str) -> Any:
    """``module_name`` imported, from the working directory too when it is not on ``sys.path`` (the ``harness``
    console script and ``pytest`` put their own directory there, not the project's, as ``python -m`` does)."""
    import importlib
    import os

    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        here = os.getcwd()
        if exc.name != module_name.split(".")[0] or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)
        return importlib.import_module(module_name)


def _import_scenario(ref: str) -> Scenario:
    module_name, _, attr = ref.partition(":")
    module_name = _moved_module(module_name)
    try:
        obj = getattr(_import_from_here(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise KeyError(f"cannot load scenario {ref!r}: {exc}") from None
    if not isinstance(obj, Scenario):
        raise KeyError(f"{ref!r} is a {type(obj).__name__}, not a scenarios.Scenario")
    return obj
