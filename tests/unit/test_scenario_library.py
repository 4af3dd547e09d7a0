"""The scenario registry: the library of pipelines in ``scenarios/library/``, the framework beside it, and
``module:ATTR`` references saved before the pipelines moved there (``scenarios.<name>:SCENARIO``)."""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path

import pytest

import scenarios
import scenarios.library
from harness.chaos.bundle import load_bundle
from harness.engine.spec import RunSpec
from scenarios import _moved_module, all_scenarios, get_scenario

LIBRARY = sorted(info.name for info in pkgutil.iter_modules(scenarios.library.__path__))


def test_every_library_module_is_a_registered_pipeline_and_no_framework_module_is() -> None:
    found = all_scenarios()
    assert sorted(found) == LIBRARY and len(LIBRARY) >= 16
    for name in LIBRARY:
        assert importlib.import_module(f"scenarios.library.{name}").SCENARIO is found[name]
    framework = [i.name for i in pkgutil.iter_modules(scenarios.__path__) if not i.ispkg]
    assert framework and not set(framework) & set(LIBRARY)
    for name in framework:
        assert not hasattr(importlib.import_module(f"scenarios.{name}"), "SCENARIO"), name


@pytest.mark.parametrize("name", ["dedup_stream", "tws_sessions", "tws_sessions_ttl"])
def test_a_reference_saved_before_the_move_resolves_to_the_library_module(name: str) -> None:
    moved = importlib.import_module(f"scenarios.library.{name}").SCENARIO
    assert get_scenario(f"scenarios.{name}:SCENARIO") is moved
    assert get_scenario(f"scenarios.library.{name}:SCENARIO") is moved is get_scenario(name)


def test_the_alias_maps_only_moved_pipelines() -> None:
    assert _moved_module("scenarios.file_source_json") == "scenarios.library.file_source_json"
    for unchanged in ("scenarios.base", "scenarios.sinks.transactional", "scenarios.library.dedup_stream"):
        assert _moved_module(unchanged) == unchanged
    for unchanged in ("scenarios.no_such_pipeline", "scenarios._private", "examples.pipelines.orders", "x"):
        assert _moved_module(unchanged) == unchanged
    # a non-scenario attribute of a moved module still loads (the old test suites named NAIVE_APPEND so)
    from scenarios.library.file_source_json import NAIVE_APPEND

    assert get_scenario("scenarios.file_source_json:NAIVE_APPEND") is NAIVE_APPEND
    with pytest.raises(KeyError, match=r"cannot load scenario 'scenarios\.no_such_pipeline:SCENARIO'"):
        get_scenario("scenarios.no_such_pipeline:SCENARIO")


def test_a_bundle_written_before_the_move_loads_and_resolves(tmp_path: Path) -> None:
    """A bundle keeps the scenario as the run was given it; one naming the old module path still replays."""
    spec = RunSpec("scenarios.tws_sessions:SCENARIO", 3, kills=1)
    (tmp_path / "bundle.json").write_text(json.dumps({"spec": json.loads(spec.to_json()), "verdict": "violated"}))
    loaded, _ = load_bundle(tmp_path)
    assert loaded == spec and get_scenario(loaded.scenario) is get_scenario("tws_sessions")
