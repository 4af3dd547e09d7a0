"""The command registry (harness.cli.commands): every command's functions resolve, and one name has one command."""

from __future__ import annotations

import importlib

import pytest

from harness.cli.commands import COMMANDS, Command, register
from harness.cli.main import build_parser

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_reference_resolves_to_a_function(name: str) -> None:
    command = COMMANDS[name]
    for ref in (command.add_arguments, command.handler):
        if ref is None:
            continue
        module, _, attr = ref.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), ref


def test_the_parser_lists_every_command_in_registration_order() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)  # type: ignore[arg-type]


def test_only_the_checkpoint_reader_and_the_merge_run_on_any_pyspark() -> None:
    assert {n for n, c in COMMANDS.items() if not c.starts_spark} == {"inspect", "merge"}
    assert {n for n, c in COMMANDS.items() if c.spark_dirs} == {
        "run", "chaos", "replay", "check-source", "check-sink", "certify", "census", "upgrade-check", "bench",
    }  # fmt: skip


def test_a_second_command_of_a_name_is_refused() -> None:
    with pytest.raises(ValueError, match="'run' is registered twice"):
        register(Command("run", "again", None, "harness.cli.run:cmd_list"))


def test_bench_help_names_every_section() -> None:
    from harness.bench.suite import SECTIONS

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    bench = sub.choices["bench"]  # type: ignore[index]
    only = next(a for a in bench._actions if a.dest == "only")
    assert all(section in only.help for section in SECTIONS), only.help


def test_a_reader_that_closes_the_pipe_early_gets_no_traceback() -> None:
    """``harness certify --list | head -1``: the command ends quietly (141, as a pipe's writer) once its reader
    has gone, whatever it still had to print; no traceback."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "certify", "--list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader goes away before the command (still importing) writes its first line
    code = proc.wait(timeout=60)
    err = proc.stderr.read().decode()
    assert code == 141, err
    assert "Traceback" not in err and err == "", err
