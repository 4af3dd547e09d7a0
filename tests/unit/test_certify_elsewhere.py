"""``certify --pyspark PYTHON``: the options passed on, the environment probed, refusals in one line."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

from harness.cli.main import build_parser, main
from harness.conformance.certify.elsewhere import certify_argv, certify_under, child_env, probe
from harness.errors import UsageError


def _parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["certify", *argv])


@pytest.mark.parametrize(
    "argv",
    [
        (),
        ("--only", "sink:memory,sink:kafka", "--json", "out/c.json", "--seed", "7"),
        ("--list",),
        ("--upgrades", "--save-fixtures", "fx", "--keep", "runs", "--html", "r.html"),
    ],
)
def test_every_option_reaches_the_child_as_given(argv: tuple[str, ...]) -> None:
    args = _parse(*argv, "--pyspark", "/some/python")
    again = _parse(*certify_argv(args))
    assert vars(again) == {**vars(args), "pyspark": None}


def _certify_actions() -> list[argparse.Action]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [a for a in sub.choices["certify"]._actions if a.dest not in ("help", "pyspark")]


def test_every_certify_option_is_passed_on_as_the_parser_takes_it() -> None:
    """Each option of ``certify`` (a new one too) reaches the child, a flag as a flag and a value as a value."""
    argv: list[str] = []
    for action in _certify_actions():
        argv += [action.option_strings[0]] if action.nargs == 0 else [action.option_strings[0], "1"]
    args = _parse(*argv, "--pyspark", "/some/python")
    assert certify_argv(args) == argv


def test_this_environment_answers_with_its_pyspark() -> None:
    assert probe(Path(sys.executable)) == pyspark.__version__


def test_a_missing_interpreter_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--pyspark .*nope: no such interpreter; give the python of"):
        probe(tmp_path / "nope")


def test_an_environment_without_pyspark_or_the_harness_says_what_to_install(tmp_path: Path) -> None:
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    with pytest.raises(UsageError) as caught:
        probe(tmp_path / "bare" / "bin" / "python")
    text = str(caught.value)
    assert "No module named" in text and "-m pip install HARNESS pyspark==RELEASE" in text
    assert "\n" not in text


FAKE_PYTHON = """#!/bin/sh
if [ "$1" = "-P" ] && [ "$2" = "-c" ]; then echo '{"pyspark": "9.9.9"}'; exit 0; fi
echo "$@" > "$(dirname "$0")/argv"
env > "$(dirname "$0")/env"
exit 3
"""


def test_the_child_runs_certify_with_the_options_and_its_exit_code_is_the_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.chdir(tmp_path)
    said: list[str] = []
    args = _parse("--only", "sink:memory", "--json", "c.json", "--pyspark", "bin/python")
    assert certify_under(args.pyspark, args, said.append) == 3
    assert said == [f"certify: PySpark 9.9.9 of {python}"]
    assert (tmp_path / "bin" / "argv").read_text().split() == [
        "-P", "-m", "harness", "certify", "--json", "c.json", "--only", "sink:memory", "--seed", "1"
    ]  # fmt: skip
    child = (tmp_path / "bin" / "env").read_text()
    assert "PYSPARK_PYTHON=" not in child and "PATH=" in child


def test_the_command_refuses_in_one_line_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "--pyspark", str(tmp_path / "nope"), "--only", "sink:memory"]) == 2
    err = capsys.readouterr().err
    assert "no such interpreter" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_child_gets_no_python_or_pyspark_of_this_environment() -> None:
    env = child_env({"PYSPARK_PYTHON": "/v/bin/python", "PYTHONPATH": "/repo", "VIRTUAL_ENV": "/v",
                     "SPARK_HOME": "/s", "HARNESS_CACHE_DIR": "/c", "PATH": "/bin"})  # fmt: skip
    assert env == {"HARNESS_CACHE_DIR": "/c", "PATH": "/bin"}
