"""Pipelines under test, the replayable source and their registry."""

from __future__ import annotations

from scenarios.base import Scenario, SinkContext
from scenarios.rowgen import PROVENANCE, SCHEMA_DDL, ConfigError, SourceConfig

__all__ = [
    "PROVENANCE",
    "SCHEMA_DDL",
    "ConfigError",
    "Scenario",
    "SinkContext",
    "SourceConfig",
    "all_scenarios",
    "get_scenario",
]


def all_scenarios() -> dict[str, Scenario]:
    """Built-in scenarios by name (imports pyspark)."""
    from scenarios import file_sink_stateless, foreachbatch_append_naive

    return {s.name: s for s in (file_sink_stateless.SCENARIO, foreachbatch_append_naive.SCENARIO)}


def get_scenario(name: str) -> Scenario:
    """The scenario called ``name``; ``KeyError`` lists the known names."""
    scenarios = all_scenarios()
    if name not in scenarios:
        raise KeyError(f"unknown scenario {name!r}; known: {', '.join(sorted(scenarios))}")
    return scenarios[name]
