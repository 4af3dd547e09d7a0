"""The front door: ``import harness`` is light, and every name in ``harness.__all__`` resolves to the object
its owning module defines."""

from __future__ import annotations

import subprocess
import sys

import pytest

import harness


def test_import_harness_loads_neither_pyspark_nor_the_engine() -> None:
    code = (
        "import sys, harness; print(sorted(m for m in ('pyspark', 'harness.runner', 'hypothesis') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", harness.__all__)
def test_every_public_name_resolves_to_its_owner(name: str) -> None:
    import importlib

    module, attr = harness._EXPORTS[name]
    assert getattr(harness, name) is getattr(importlib.import_module(module), attr)
    assert name in dir(harness)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = harness.nope  # type: ignore[attr-defined]


def test_the_documented_example_runs_through_the_public_names() -> None:
    spec = harness.RunSpec("file_sink_stateless", seed=3, kills=2)
    assert spec.scenario == "file_sink_stateless" and callable(harness.run)
    assert harness.FaultPlan(()).rules == ()
