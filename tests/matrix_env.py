"""The support matrix's environments: ``.venv-matrix/<release>``, one per PySpark release, holding that release
first and this checkout's wheel after it (``tests/matrix.py`` measures there; the default suite's xdist test runs
there on the newest release), and the environment their commands run with.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from harness.spark.releases import DELTA_FOR_LINE
from tests.integration.userenv import build_wheel, clean_environ, make_venv, run

ROOT = Path(__file__).resolve().parents[1]


def clean_env() -> dict[str, str]:
    """The environment the release's commands run in: the checkout's settings left out (tests.integration.userenv)."""
    return clean_environ() | {"SPARK_LOCAL_IP": "127.0.0.1", "NO_COLOR": "1"}


#: Bumped when how an environment is built changes (the order of installs, pip's flags): every one is rebuilt.
ENV_FORMAT = 1


def _deps_key(release: str, extras: str) -> str:
    """What an environment's third-party contents follow: how it is built, the release, the extras and
    pyproject.toml's dependency lists."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = [ENV_FORMAT, release, extras, project["dependencies"], project.get("optional-dependencies", {})]
    return hashlib.sha256(json.dumps(listed, sort_keys=True).encode()).hexdigest()[:16]


def _tree_key() -> str:
    """The checkout the wheel is built from: its commit and a digest of its uncommitted changes."""
    git = ["git", "-C", str(ROOT)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    edits = subprocess.run([*git, "diff", "HEAD"], capture_output=True, text=True).stdout
    return f"{head or 'no-commit'}+{hashlib.sha256(edits.encode()).hexdigest()[:12]}"


def plan(stamp: str, tree: str, deps: str, has_python: bool) -> str:
    """What ``build`` does with an environment whose stamp reads ``stamp``: ``keep`` it (the same checkout and
    dependencies), reinstall only the ``wheel`` (another checkout, the same dependencies) or build it ``full``
    (new dependencies, an older stamp's format, no stamp, no interpreter)."""
    said = stamp.split()
    if not has_python or len(said) != 2 or said[1] != deps:
        return "full"
    return "keep" if said[0] == tree else "wheel"


def build(release: str) -> Path:
    """``.venv-matrix/<release>``: ``pyspark==release``, then the wheel, which must keep it. Built again when the
    dependencies changed; for another checkout with the same dependencies only the wheel is installed again."""
    venv = ROOT / ".venv-matrix" / release
    # Delta's Python API exists for the lines Delta's jars are built for (delta-spark 4.4: PySpark <= 4.2.0).
    extras = "delta" if ".".join(release.split(".")[:2]) in DELTA_FOR_LINE else ""
    tree, deps = _tree_key(), _deps_key(release, extras)
    stamp = venv / ".harness-stamp"
    todo = plan(stamp.read_text() if stamp.is_file() else "", tree, deps, (venv / "bin" / "python").is_file())
    if todo == "keep":
        return venv
    wheels = venv.parent / f"wheels-{release}"  # one per release: builds of two releases never share it
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    if todo == "wheel":
        # Seconds instead of a minute: the release and every dependency stay, the checkout's wheel is new.
        print(f"matrix: reinstalling this checkout's wheel in {venv}", file=sys.stderr)
        wheel = build_wheel(wheels, clean_environ())
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        again = run([*pip, "--no-deps", "--force-reinstall", "--no-compile", str(wheel)], wheels, clean_environ(), 600)
        if again.returncode == 0:
            stamp.write_text(f"{tree} {deps}")
            return venv
        print(f"matrix: the wheel's reinstall failed (above); building {venv} again", file=sys.stderr)
    print(f"matrix: building {venv} (PySpark {release} and this checkout's wheel; first time ~2 min)", file=sys.stderr)
    shutil.rmtree(venv, ignore_errors=True)
    # The release first, the wheel after it, as a team adds the harness to a project that pins its Spark: the
    # wheel's install must keep it (checked here; set-up would refuse or take another release otherwise).
    make_venv(venv, wheels, (), clean_environ(), extras, first=(f"pyspark=={release}",))
    kept = subprocess.run([str(venv / "bin" / "python"), "-c", "import pyspark; print(pyspark.__version__)"],
                          capture_output=True, text=True, env=clean_environ())  # fmt: skip
    if kept.stdout.strip() != release:
        raise SystemExit(f"matrix: installing the wheel replaced PySpark {release} with {kept.stdout.strip()!r}")
    stamp.write_text(f"{tree} {deps}")
    return venv


def harness_env(venv: Path) -> dict[str, str]:
    """The environment ``venv``'s ``harness`` runs in: the checkout's settings left out, its ``bin`` first."""
    return clean_env() | {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
