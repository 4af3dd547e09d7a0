"""``certify --pyspark PYTHON``: the same measurement on the PySpark of another environment.

The harness measures the Spark it runs in, so a release is certified from an environment that holds that
release and the harness (``bin/test-matrix`` builds one per release under ``.venv-matrix/<release>``; a team's
own venv with the wheel installed is one too). :func:`probe` checks that ``PYTHON`` is such an environment;
:func:`certify_under` runs ``PYTHON -m harness certify`` there with the same options, its output and exit code
the command's. Nothing of this environment's Python reaches the child: its ``PYSPARK_*``, ``PYTHON*``,
``VIRTUAL_ENV`` and ``SPARK_HOME`` are left out (a ``PYSPARK_PYTHON`` of this venv would run the other release's
workers on this one's pyspark), and the child runs with ``-P`` (the harness installed there, not a checkout in
the working directory).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from harness.errors import UsageError

#: What the child needs: its PySpark and the modules ``certify`` runs (the harness and its dependencies).
_PROBE = (
    "import json, pyspark, harness.conformance.certify.command, hypothesis; "
    "print(json.dumps({'pyspark': pyspark.__version__}))"
)
#: ``certify``'s options as the parser stores them: (destination, flag, takes a value).
_OPTIONS = (
    ("json", "--json", True),
    ("html", "--html", True),
    ("only", "--only", True),
    ("list", "--list", False),
    ("seed", "--seed", True),
    ("keep", "--keep", True),
    ("upgrades", "--upgrades", False),
    ("save_fixtures", "--save-fixtures", True),
)


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default this process's environment) without what would carry this environment's Python or
    PySpark into the child (``PYSPARK_*``, ``PYTHON*``, ``VIRTUAL_ENV``, ``SPARK_HOME``)."""
    env = dict(os.environ if base is None else base)
    drop = ("PYSPARK_", "PYTHON", "VIRTUAL_ENV")
    return {k: v for k, v in env.items() if not k.startswith(drop) and k != "SPARK_HOME"}


def probe(python: Path) -> str:
    """The PySpark release of ``python``'s environment; :class:`UsageError`, in one line saying what to do,
    when ``python`` is not an interpreter or its environment lacks PySpark or the harness."""
    python = python.absolute()  # not resolve(): a venv's python is a symlink out of the venv
    if not python.is_file() or not os.access(python, os.X_OK):
        raise UsageError(
            f"--pyspark {python}: no such interpreter; give the python of an environment that holds the PySpark "
            "release to certify and this harness (bin/test-matrix builds one per release)"
        )
    try:
        done = subprocess.run(
            [str(python), "-P", "-c", _PROBE], capture_output=True, text=True, timeout=120, env=child_env()
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--pyspark {python}: could not run it ({exc})") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["it exited with " + str(done.returncode)])[-1]
        raise UsageError(
            f"--pyspark {python}: its environment cannot run certify ({last}); install the harness there with "
            "its PySpark pinned, so that pip keeps the release to certify (a wheel of this checkout, or its git "
            f"URL: `{python} -m pip install HARNESS pyspark==RELEASE`, docs/your-project.md), then run "
            f"`{python} -m harness setup`"
        )
    try:
        version = str(json.loads(done.stdout.strip().splitlines()[-1])["pyspark"])
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--pyspark {python}: its answer was not PySpark's version: {done.stdout[-200:]!r}") from exc
    return version


def certify_argv(args: argparse.Namespace) -> list[str]:
    """``certify``'s options in ``args`` as a command line (``--pyspark`` left out), for the child."""
    argv: list[str] = []
    for dest, flag, takes_value in _OPTIONS:
        value = getattr(args, dest, None)
        if takes_value and value is not None:
            argv += [flag, str(value)]
        elif not takes_value and value:
            argv.append(flag)
    return argv


def certify_under(python: Path, args: argparse.Namespace, echo: Callable[[str], None] = print) -> int:
    """Run ``certify`` with ``args``'s options under ``python`` (:func:`probe` first); its exit code."""
    python = python.absolute()
    version = probe(python)
    echo(f"certify: PySpark {version} of {python}")
    # -P: the installed harness, never a checkout that happens to be the working directory.
    cmd = [str(python), "-P", "-m", "harness", "certify", *certify_argv(args)]
    code = subprocess.run(cmd, env=child_env()).returncode
    return 128 - code if code < 0 else code  # killed by a signal: the shell's convention
