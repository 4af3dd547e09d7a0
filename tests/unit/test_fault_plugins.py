"""Plugins' fault actions: found through the entry-point group of an installed distribution (a real
``*.dist-info`` on ``sys.path``, no mock), checked against the contract, refused in one line naming the
entry point and its package when they break it."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from fault_injectors import registry
from fault_injectors.nemesis import apply_nemesis, checkpoint_nemeses
from fault_injectors.plan import FaultPlanError, FaultRule
from fault_injectors.plugins import GROUP, PluginError, forget

pytestmark = pytest.mark.unit
Install = Callable[..., None]

GOOD = """
from fault_injectors.actions import Action

def _run(rule, batch, fault_dir):
    raise RuntimeError("not fired in this test")

FAULT_ACTIONS = [
    Action("{ep}.freeze", "freeze", "SIGSTOP the driver", "driver", _run, from_watcher=True, drawn=True),
    Action("{ep}.slow_disk", "slow disk", "delay the checkpoint's writes", "daemon", _run),
]
"""


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """``install(ep_name, module_source)``: a distribution on ``sys.path`` whose entry point ``ep_name`` of
    :data:`GROUP` names a module with that source."""
    monkeypatch.syspath_prepend(str(tmp_path))
    forget()

    def install(ep: str, source: str, dist: str = "vendor-faults") -> None:
        module = f"mod_{ep}"
        (tmp_path / f"{module}.py").write_text(source.replace("{ep}", ep))
        info = tmp_path / f"{dist.replace('-', '_')}-1.0.dist-info"
        info.mkdir(exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        points = info / "entry_points.txt"
        old = points.read_text() if points.exists() else f"[{GROUP}]\n"
        points.write_text(old + f"{ep} = {module}\n")
        forget()

    yield install
    forget()
    for name in [m for m in sys.modules if m.startswith("mod_")]:
        del sys.modules[name]


def test_no_plugin_keeps_the_builtins_only(installed: Install) -> None:
    assert list(registry.registered()) == [
        "kill_process_group", "raise", "exit", "kill_executor", "kill_worker", "kill_master", "kill_broker",
        "kill_python",
    ]  # fmt: skip
    assert registry.plugin_drawn(watcher=False) == ()


def test_an_installed_plugin_adds_its_actions(installed: Install) -> None:
    installed("vendor", GOOD)
    assert list(registry.registered())[-2:] == ["vendor.freeze", "vendor.slow_disk"]
    rule = FaultRule("p", "after_offsets_logged", 1, action="vendor.freeze")
    assert rule.describe() == "freeze at after_offsets_logged of batch 1"
    assert registry.kills_driver("vendor.freeze") and registry.history_kind("vendor.freeze") == "kill"
    assert not registry.crashes("vendor.slow_disk")
    # Drawn by campaigns: only what says so, needs nothing, and (at a watcher-only point) takes the driver down
    # from there, as every watcher does.
    assert registry.plugin_drawn(watcher=True) == ("vendor.freeze",)
    assert registry.plugin_drawn(watcher=False) == ("vendor.freeze",)
    # The watcher-only points take it: it kills the driver from the watcher.
    FaultRule("s", "state.snapshot", 2, action="vendor.freeze")
    with pytest.raises(FaultPlanError, match="can only take the driver down"):
        FaultRule("s", "state.snapshot", 2, action="vendor.slow_disk")


def test_an_unknown_action_lists_the_plugins_too(installed: Install) -> None:
    installed("vendor", GOOD)
    known = r"field 'action': 'vendor\.melt' is no fault action; known: .*vendor\.freeze"
    with pytest.raises(FaultPlanError, match=known):
        FaultRule("p", "source.read", 1, action="vendor.melt")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("import not_a_module_anywhere\n", "failed to load: ModuleNotFoundError"),
        ("X = 1\n", "has no FAULT_ACTIONS .* and no NEMESES"),
        ("NEMESES = {'vendor.x': 3}\n", "nemesis vendor.x: give a function with a docstring"),
        ("NEMESES = {'x': print}\n", "nemesis name 'x' must be 'vendor', a dot"),
        ("NEMESES = [print]\n", "NEMESES must map names to functions"),
        (GOOD.replace('"driver", _run, from_', '"firing", _run, from_'), "a watcher thread has"),
        (GOOD.replace('"{ep}.freeze"', '"freeze"'), "action name 'freeze' must be 'vendor', a dot"),
        (GOOD.replace('"{ep}.freeze"', '"other.freeze"'), "action name 'other.freeze' must be 'vendor'"),
        (GOOD.replace('"driver", _run', '"node", _run'), "effect 'node'; known"),
        ("FAULT_ACTIONS = [object()]\n", "is no fault action"),
    ],
)
def test_a_broken_plugin_is_refused_naming_it(installed: Install, source: str, message: str) -> None:
    installed("vendor", source)
    with pytest.raises(PluginError, match=message) as caught:
        registry.registered()
    text = str(caught.value)
    assert "plugin 'vendor' (mod_vendor, package vendor-faults" in text and "\n" not in text


def test_a_builtin_name_needs_no_plugin_scan(installed: Install) -> None:
    # A Python worker validating its plan with built-in actions never loads plugins: a broken one
    # installed beside cannot fail a run that does not use it.
    installed("vendor", "import not_a_module_anywhere\n")
    assert registry.action("raise").verb == "raise"
    FaultRule("k", "source.read", 1, action="kill_process_group")
    with pytest.raises(PluginError):
        registry.action("vendor.freeze")


def test_a_plugin_names_only_its_own_actions(installed: Install) -> None:
    installed("vendor", GOOD)
    installed("second", GOOD.replace("{ep}.freeze", "vendor.freeze"), dist="second-faults")
    with pytest.raises(PluginError, match="must be 'second'"):
        registry.registered()


def test_two_packages_cannot_claim_one_name(installed: Install) -> None:
    installed("vendor", GOOD)
    installed("vendor", GOOD, dist="second-faults")
    with pytest.raises(PluginError, match=r"'vendor\.freeze' is taken"):
        registry.registered()


def test_every_command_refuses_a_broken_plugin_in_one_line(
    installed: Install, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli.main import main

    installed("vendor", "import not_a_module_anywhere\n")
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: plugin 'vendor' (mod_vendor, package vendor-faults") and err.count("\n") == 1


DAMAGE = """
from pathlib import Path


def wipe_sources(checkpoint: Path) -> str:
    \"\"\"Delete the sources/ directory (a restore that left it out).\"\"\"
    import shutil

    shutil.rmtree(checkpoint / "sources")
    return f"deleted {checkpoint / 'sources'}"


NEMESES = {"{ep}.wipe_sources": wipe_sources}
"""


def test_a_plugins_nemesis_is_known_listed_and_applied(installed: Install, tmp_path: Path) -> None:
    installed("vendor", DAMAGE)
    known = checkpoint_nemeses()
    assert list(known)[-1] == "vendor.wipe_sources" and "remove_metadata" in known
    ckpt = tmp_path / "checkpoint"
    (ckpt / "sources" / "0").mkdir(parents=True)
    assert apply_nemesis("vendor.wipe_sources", ckpt) == f"deleted {ckpt / 'sources'}"
    assert not (ckpt / "sources").exists()
    # The schedule names it like a built-in one: a checkpoint nemesis after the rounds.
    from harness.engine.schedule import build_schedule
    from harness.engine.spec import RunSpec
    from scenarios import all_scenarios

    spec = RunSpec("file_sink_stateless", 1, kills=1, nemesis=("vendor.wipe_sources",))
    ops = build_schedule(spec, all_scenarios()["file_sink_stateless"]).ops
    assert [op.describe() for op in ops if op.kind == "nemesis"] == [
        "checkpoint nemesis vendor.wipe_sources (no query running)"
    ]


def test_a_daemon_action_is_not_drawn_where_only_a_watcher_fires(installed: Install) -> None:
    # The watchers of a sink's commit window and of state files fire only actions that take the driver down: a
    # daemon action drawn there would never fire.
    installed("vendor", GOOD.replace('"daemon", _run)', '"daemon", _run, from_watcher=True, drawn=True)'))
    assert registry.plugin_drawn(watcher=False) == ("vendor.freeze", "vendor.slow_disk")
    assert registry.plugin_drawn(watcher=True) == ("vendor.freeze",)
