"""The front door: ``import harness`` is light, and every name in ``harness.__all__`` resolves to the object
its owning module defines."""

from __future__ import annotations

import subprocess
import sys

import pytest

import harness


def test_import_harness_loads_neither_pyspark_nor_the_engine() -> None:
    heavy = "('pyspark', 'harness.engine.runner', 'hypothesis')"
    code = f"import sys, harness; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_import_harness_conformance_loads_no_pyspark() -> None:
    code = "import harness.conformance, sys; assert 'pyspark' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)


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


SUBPACKAGES = ("bench", "chaos", "cli", "conformance", "engine", "sources", "spark", "timeline", "verdict")


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_every_subpackage_lists_its_public_names_and_each_resolves_to_its_owner(package: str) -> None:
    import importlib

    pkg = importlib.import_module(f"harness.{package}")
    assert pkg.__all__ and set(pkg.__all__) == set(getattr(pkg, "_EXPORTS", pkg.__all__)), package
    for name in pkg.__all__:
        value = getattr(pkg, name)
        owner = getattr(value, "__module__", None)
        assert owner is None or owner.startswith(("harness.", "scenarios.")), (package, name, owner)
    with pytest.raises(AttributeError, match=f"module 'harness.{package}' has no attribute 'nope'"):
        _ = pkg.nope


def test_the_flat_layout_is_gone() -> None:
    """Every module of harness/ lives in the subpackage of its concept; the top level keeps the front door and
    the kinds of error every package's exceptions derive from."""
    from pathlib import Path

    top = sorted(p.name for p in Path(harness.__file__).parent.glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "_lazy.py", "errors.py", "pytest_plugin.py", "testing.py"]


def test_conformance_is_grouped_by_product() -> None:
    """harness/conformance/ keeps the shared vocabulary and the front ends at its top, each product in its own
    subpackage; the kit's result class is not named like the verdict's."""
    from pathlib import Path

    import harness.conformance as conformance
    import harness.verdict as verdict

    root = Path(conformance.__file__).parent
    assert len(list(root.glob("*.py"))) <= 8
    assert {p.name for p in root.iterdir() if (p / "__init__.py").exists()} == {"certify", "sink", "source"}
    assert not set(conformance.__all__) & set(verdict.__all__)
