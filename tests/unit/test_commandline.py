"""Printed commands paste as they are (issue 26 point 4): every command line the harness prints or stores is
shell-quoted and splits back (``shlex.split``, ``bash -c``, ``zsh -c``) into the arguments meant, and names the
harness as the run was started, so a line printed by a run started elsewhere runs from there."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from fault_injectors.plan import FaultRule
from harness.chaos.profiles import get_profile
from harness.chaos.result import campaign_command, source_campaign_command
from harness.cli.census import _replay as census_replay
from harness.engine.commandline import harness_command, harness_prefix, shell_line
from harness.engine.report import campaign_tail
from harness.engine.spec import RunSpec

pytestmark = pytest.mark.unit

PREFIX = harness_prefix()
MASTERS = ["connect:local[2]", "local-cluster[2,1,1024]", "connect:local-cluster[2,1,1024]"]
SHELLS = [pytest.param("bash", id="bash"), pytest.param("zsh", id="zsh")]


def _args(line: str) -> list[str]:
    """The harness arguments of a printed line (after the interpreter and ``-m harness``)."""
    argv = shlex.split(line)
    assert argv[: len(PREFIX)] == PREFIX, line
    return argv[len(PREFIX) :]


def _shell_argv(shell: str, line: str, cwd: Path) -> list[str]:
    """The arguments ``shell -c LINE`` passes to the program it starts (``printf`` stands in for it)."""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    out = subprocess.run([shell, "-c", f"printf '%s\\0' {line}"], cwd=cwd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr  # zsh: "no matches found" for an unquoted [...]
    return out.stdout.split("\0")[:-1]


@pytest.mark.parametrize("master", MASTERS)
def test_run_replay_line_quotes_the_master(master: str) -> None:
    spec = RunSpec("file_sink_stateless", 7, 1, master=master)
    line = spec.replay_command()
    assert _args(line) == ["run", "file_sink_stateless", "--seed", "7", "--kills", "1", "--master", master]
    assert f"'{master}'" in line


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("master", ["connect:local[2]", "local-cluster[2,1,1024]"])
def test_replay_line_runs_unchanged_under_the_shell(shell: str, master: str, tmp_path: Path) -> None:
    kill = FaultRule("x1", "sink.write.mid", 1, partition=0, after_rows=3)
    line = RunSpec("file_sink_stateless", 7, 0, extra_faults=(kill,), master=master).replay_command()
    assert _shell_argv(shell, line, tmp_path) == shlex.split(line)
    assert shlex.split(line)[-2:] == ["--master", master]


@pytest.mark.parametrize("master", MASTERS)
def test_campaign_rerun_line_round_trips(master: str, tmp_path: Path) -> None:
    profile = get_profile("ci").with_examples(5).with_volume(1000, 50)
    db = str(tmp_path / "example db=1")
    line = campaign_command("a:B", 3, profile, shard="2/4", database=db, nemesis=("x", "y"), workers=2, master=master)
    assert _args(line) == [
        "chaos", "a:B", "--examples", "5", "--seed", "3", "--profile", "ci", "--shard", "2/4", "--database", db,
        "--nemesis", "x,y", "--workers", "2", "--master", master, "--volume", "1000", "--batch-rows", "50",
    ]  # fmt: skip


def test_source_campaign_and_census_lines_keep_options_with_spaces_and_equals() -> None:
    subject = ["--source", "my dir/src.py:Src", "--option", "path=/tmp/a b", "--option", "q=x=y"]
    line = source_campaign_command(subject, get_profile("ci").with_examples(2), 9)
    assert _args(line) == ["chaos", *subject, "--examples", "2", "--seed", "9", "--profile", "ci"]
    args = argparse.Namespace(scenario=None, sink="s dir/s.py:F", read_back="r.py:g", options=["a=b c"], rounds=2)
    assert _args(census_replay(args, 4)) == [
        "census", "--sink", "s dir/s.py:F", "--read-back", "r.py:g", "--option", "a=b c",
        "--seed", "4", "--rounds", "2",
    ]  # fmt: skip


def test_report_footers_and_junit_properties_round_trip(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle [1]"
    tail = campaign_tail([], bundle, "unused")
    assert tail[-1].startswith("replay: ") and _args(tail[-1][len("replay: ") :]) == ["replay", str(bundle)]
    assert campaign_tail([], None, "harness chaos x")[-1] == "rerun: harness chaos x"

    from harness.pytest_plugin import _record_properties

    node = SimpleNamespace(nodeid="t.py::test_x[a b]", user_properties=[])
    request = SimpleNamespace(node=node)
    result = SimpleNamespace(bundle=None, seed=5, subject_name="s", verdict="violated")
    _record_properties(request, result, "ci")  # type: ignore[arg-type]
    replay = dict(node.user_properties)["replay"]
    assert shlex.split(replay) == ["pytest", "t.py::test_x[a b]", "--harness-seed", "5", "--harness-profile", "ci"]
    node.user_properties.clear()
    _record_properties(request, SimpleNamespace(**{**vars(result), "bundle": bundle}), "ci")  # type: ignore[arg-type]
    assert _args(dict(node.user_properties)["replay"]) == ["replay", str(bundle)]


def test_the_interpreter_is_the_one_the_run_used(tmp_path: Path) -> None:
    root = tmp_path / "project"
    python = root / ".venv" / "bin" / "python"
    assert harness_prefix(cwd=root, argv0="-m", executable=str(python)) == [".venv/bin/python", "-m", "harness"]
    assert harness_prefix(cwd=tmp_path / "elsewhere", argv0="-m", executable=str(python))[0] == str(python)
    assert harness_prefix(cwd=python.parent, argv0="-m", executable=str(python))[0] == "./python"  # not PATH's
    assert harness_prefix(cwd=root / ".venv2", argv0="-m", executable=str(python))[0] == str(python)


def test_the_console_script_is_named_as_it_was_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "bin" / "harness"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert harness_prefix(argv0=str(script)) == ["harness"]
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert harness_prefix(argv0=str(script)) == [str(script)]


@pytest.mark.parametrize("shell", SHELLS)
def test_a_line_printed_by_a_run_started_elsewhere_runs_from_there(shell: str, tmp_path: Path) -> None:
    """A process started in another directory with this interpreter prints the replay line of a ``--remote
    local`` run; that line (with ``--help`` added, so no Spark starts) runs under the shell from there."""
    code = (
        "from harness.engine.spec import RunSpec; "
        "print(RunSpec('file_sink_stateless', 7, 0, master='connect:local[2]').replay_command())"
    )
    printed = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    line = printed.stdout.strip()
    assert shlex.split(line)[:3] == [os.path.abspath(sys.executable), "-m", "harness"], line
    assert _shell_argv(shell, line, tmp_path)[3:] == shlex.split(line)[3:]
    out = subprocess.run([shell, "-c", f"{line} --help"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "--master" in out.stdout, out.stderr
    listed = subprocess.run([shell, "-c", shell_line([*shlex.split(line)[:3], "list"])], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert listed.returncode == 0 and "file_sink_stateless" in listed.stdout, listed.stderr


def test_harness_command_is_the_prefix_and_the_quoted_arguments() -> None:
    assert harness_command("replay", "a b") == shell_line([*PREFIX, "replay", "a b"])
    assert shlex.split(harness_command("x=y", "[1]", "")) == [*PREFIX, "x=y", "[1]", ""]
