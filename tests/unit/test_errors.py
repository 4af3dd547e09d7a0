"""Every exception class of the harness, its scenarios and its fault injectors has its kind in harness.errors."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import fault_injectors
import harness
import scenarios
from harness.errors import KINDS, HarnessException, SetupError, UsageError

#: Modules that act when imported: a command's entry point, the interpreter hook Spark's workers load.
ACTS_ON_IMPORT = ("harness.__main__", "harness.spark.sitepath")


def _modules() -> list[str]:
    names = []
    for package in (harness, scenarios, fault_injectors):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if not info.name.startswith(ACTS_ON_IMPORT):
                names.append(info.name)
    return names


def _own_exception_classes() -> list[type[BaseException]]:
    found = []
    for name in _modules():
        if name == "harness.errors":  # the kinds themselves
            continue
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == name and issubclass(cls, BaseException):
                found.append(cls)
    return found


def test_every_exception_class_has_a_kind() -> None:
    classes = _own_exception_classes()
    assert len(classes) > 40, [c.__qualname__ for c in classes]  # the walk found the packages' classes
    homeless = [f"{c.__module__}.{c.__qualname__}" for c in classes if not any(issubclass(c, k) for k in KINDS)]
    assert homeless == [], f"give these a kind from harness.errors: {homeless}"


@pytest.mark.parametrize("kind", KINDS)
def test_a_kind_adds_no_builtin_base(kind: type[HarnessException]) -> None:
    """``except ValueError`` keeps catching what it caught: a class keeps its own builtin base beside its kind."""
    assert kind.__mro__[1:] == (HarnessException, Exception, BaseException, object)


def test_the_builtin_bases_stay() -> None:
    from fault_injectors.plan import FaultPlanError
    from harness.engine.conductor import HarnessError, RunRefused

    assert issubclass(FaultPlanError, ValueError) and issubclass(FaultPlanError, UsageError)
    assert issubclass(RunRefused, HarnessError) and issubclass(RunRefused, RuntimeError)


@pytest.mark.parametrize("kind", [UsageError, SetupError])
def test_a_refusal_no_command_worded_is_one_line_and_exit_2(
    kind: type[HarnessException], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import harness.cli.main as cli
    import harness.cli.run as run_cli

    def refuses(args: object) -> int:
        raise kind("scenario x.py:Y: no attribute Y; name a Scenario in x.py")

    monkeypatch.setattr(run_cli, "cmd_list", refuses)  # the registry imports the handler when the command runs
    assert cli.main(["list"]) == 2
    err = capsys.readouterr().err
    assert err == "harness: scenario x.py:Y: no attribute Y; name a Scenario in x.py\n"
