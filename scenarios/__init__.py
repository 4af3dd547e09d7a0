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
    from scenarios import (
        agg_update_naive,
        agg_watermark_append,
        agg_watermark_update,
        dedup_stream,
        dedup_within_watermark,
        file_sink_stateless,
        foreachbatch_append_naive,
        foreachbatch_postgres_upsert,
        foreachbatch_sqlite_upsert,
        python_sink_publish_in_write,
        python_sink_transactional,
        stream_stream_join,
    )

    modules = (
        file_sink_stateless,
        foreachbatch_append_naive,
        python_sink_transactional,
        python_sink_publish_in_write,
        foreachbatch_sqlite_upsert,
        foreachbatch_postgres_upsert,
        agg_watermark_append,
        agg_watermark_update,
        dedup_stream,
        dedup_within_watermark,
        stream_stream_join,
        agg_update_naive,
    )
    return {m.SCENARIO.name: m.SCENARIO for m in modules}


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
