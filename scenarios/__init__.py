"""Pipelines under test, the replayable source and their registry."""

from __future__ import annotations

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


def all_scenarios() -> dict[str, Scenario]:
    """Built-in scenarios by name, sorted: every module of this package that defines ``SCENARIO``
    (found by scanning, so a new scenario module is registered by existing; imports pyspark)."""
    import importlib
    import pkgutil

    found: dict[str, Scenario] = {}
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg or info.name.startswith("_"):
            continue
        scenario = getattr(importlib.import_module(f"{__name__}.{info.name}"), "SCENARIO", None)
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


def _import_scenario(ref: str) -> Scenario:
    import importlib

    module_name, _, attr = ref.partition(":")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise KeyError(f"cannot load scenario {ref!r}: {exc}") from None
    if not isinstance(obj, Scenario):
        raise KeyError(f"{ref!r} is a {type(obj).__name__}, not a scenarios.Scenario")
    return obj
