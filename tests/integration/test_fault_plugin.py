"""A fault action shipped as a package of its own (``examples/plugins/platform_faults``): pip installs it,
and the harness, unchanged, lists it, fires it where a ``--kill`` names it and draws it in a chaos campaign.
Its ``platform.preempt`` SIGTERMs the driver as a platform reclaiming a node does; a correct pipeline holds
under it, a naive one is caught (both error rates, on the plugin's fault alone)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.clirun import ROOT, harness, harness_json, leftover_processes

pytestmark = pytest.mark.spark

PLUGIN = ROOT / "examples" / "plugins" / "platform_faults"


@pytest.fixture(scope="module")
def plugged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin installed by pip (its own build, its entry point) into a directory of its own."""
    target = tmp_path_factory.mktemp("plugin-site")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--disable-pip-version-check",
         "--target", str(target), str(PLUGIN)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(target.glob("harness_platform_faults-*.dist-info/entry_points.txt"))
    return target


@pytest.fixture
def with_plugin(plugged: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs started here see the plugin (every driver and Python worker inherits ``PYTHONPATH``)."""
    paths = [str(plugged), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))


def test_the_plugin_is_listed_only_once_installed(with_plugin: None, monkeypatch: pytest.MonkeyPatch) -> None:
    rc, out, err = harness("list")
    assert rc == 0, err
    assert "platform.preempt" in out and "SIGTERM the driver's process groups" in out
    monkeypatch.delenv("PYTHONPATH")
    rc, out, _ = harness("run", "file_sink_stateless", "--kill", "after_offsets_logged:0@platform.preempt")
    assert rc == 2 and "'platform.preempt' is no fault action; known: kill_process_group" in out + _


def test_a_campaign_draws_the_plugins_fault_and_the_pipeline_holds(with_plugin: None, tmp_path: Path) -> None:
    # Seed 5 of the dev profile draws the plugin's action in its 2nd and 3rd examples (PLUGIN_SHARE).
    rc, _, out = harness_json(
        tmp_path / "chaos.json", "chaos", "file_sink_stateless", "--examples", "3", "--seed", "5", "--profile", "dev"
    )
    assert rc == 0, out
    preempts = [line for line in out.splitlines() if "exactly-once" in line and "preempt at" in line]
    assert len(preempts) == 2, out
    assert "faults fired      3" in out, out
    assert not leftover_processes()


def test_the_plugins_fault_catches_a_naive_sink(with_plugin: None, tmp_path: Path) -> None:
    rc, doc, out = harness_json(
        tmp_path / "run.json", "run", "foreachbatch_append_naive", "--seed", "2", "--rounds", "1",
        "--kill", "sink.commit.after:0@platform.preempt",
    )  # fmt: skip
    assert rc == 1, out
    assert "FAULT fired x1: preempt at sink.commit.after of batch 0" in out
    assert doc["verdict"] == "violated" and doc["anomaly_counts"].get("duplicate", 0) > 0, out
    assert [(k["action"], k["batch"]) for k in doc["kills_fired"]] == [("platform.preempt", 0)]
    assert not leftover_processes()
