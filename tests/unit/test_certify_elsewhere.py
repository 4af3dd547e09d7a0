"""``certify --pyspark PYTHON``: the options passed on, the environment probed, refusals in one line."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pyspark
import pytest

from harness.cli.main import build_parser, main
from harness.conformance.certify.elsewhere import certify_argv, child_env, probe
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


def test_every_certify_option_is_passed_on() -> None:
    """A new option of ``certify`` must be added to what the child gets (or it would be dropped silently)."""
    defaults = vars(_parse())
    passed = {dest for dest in defaults if dest not in ("command", "pyspark")}
    probe_args = argparse.Namespace(**{d: ("x" if d != "list" and d != "upgrades" else True) for d in passed})
    flags = certify_argv(probe_args)
    assert {f.lstrip("-").replace("-", "_") for f in flags if f.startswith("--")} == passed


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
    assert "No module named" in text and "-m pip install 'spark-exactly-once-harness[delta]'" in text
    assert "\n" not in text


def test_the_command_refuses_in_one_line_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["certify", "--pyspark", str(tmp_path / "nope"), "--only", "sink:memory"]) == 2
    err = capsys.readouterr().err
    assert "no such interpreter" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_child_gets_no_python_or_pyspark_of_this_environment() -> None:
    env = child_env({"PYSPARK_PYTHON": "/v/bin/python", "PYTHONPATH": "/repo", "VIRTUAL_ENV": "/v",
                     "SPARK_HOME": "/s", "HARNESS_CACHE_DIR": "/c", "PATH": "/bin"})  # fmt: skip
    assert env == {"HARNESS_CACHE_DIR": "/c", "PATH": "/bin"}
