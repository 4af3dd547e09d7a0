"""The scenario framework (``Scenario``, sources, row generation, the tap, presets, shared sinks) and the
registry of the pipeline library, :mod:`scenarios.library`."""

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


def _import_scenario(ref: str) -> Scenario:
    import importlib

    module_name, _, attr = ref.partition(":")
    module_name = _moved_module(module_name)
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise KeyError(f"cannot load scenario {ref!r}: {exc}") from None
    if not isinstance(obj, Scenario):
        raise KeyError(f"{ref!r} is a {type(obj).__name__}, not a scenarios.Scenario")
    return obj
