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
from tests.integration.userenv import build_wheel, clean_environ, make_venv

ROOT = Path(__file__).resolve().parents[1]


def clean_env() -> dict[str, str]:
    """The environment the release's commands run in: the checkout's settings left out (tests.integration.userenv)."""
    return clean_environ() | {"SPARK_LOCAL_IP": "127.0.0.1", "NO_COLOR": "1"}


def _deps_key(release: str, extras: str) -> str:
    """What an environment's third-party contents follow: the release, the extras and pyproject.toml's lists."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = [release, extras, project["dependencies"], project.get("optional-dependencies", {})]
    return hashlib.sha256(json.dumps(listed, sort_keys=True).encode()).hexdigest()[:16]


def build(release: str) -> Path:
    """``.venv-matrix/<release>``: ``pyspark==release``, then the wheel, which must keep it. Built again when the
    dependencies changed; on another commit with the same dependencies only the wheel is installed again."""
    venv = ROOT / ".venv-matrix" / release
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    # Delta's Python API exists for the lines Delta's jars are built for (delta-spark 4.4: PySpark <= 4.2.0).
    extras = "delta" if ".".join(release.split(".")[:2]) in DELTA_FOR_LINE else ""
    deps = _deps_key(release, extras)
    stamp = venv / ".harness-stamp"
    said = stamp.read_text().split() if stamp.is_file() else []
    if said == [head, deps]:
        return venv
    wheels = venv.parent / "wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    if said[1:] == [deps] and (venv / "bin" / "python").is_file():
        # Seconds instead of a minute: the release and every dependency stay, the checkout's wheel is new.
        wheel = build_wheel(wheels, clean_environ())
        again = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
                                "--force-reinstall", "--no-compile", "--disable-pip-version-check", str(wheel)],
                               capture_output=True, text=True, env=clean_environ())  # fmt: skip
        if again.returncode == 0:
            stamp.write_text(f"{head} {deps}")
            return venv
    print(f"matrix: building {venv} (PySpark {release} and this checkout's wheel; first time ~2 min)", file=sys.stderr)
    shutil.rmtree(venv, ignore_errors=True)
    # The release first, the wheel after it, as a team adds the harness to a project that pins its Spark: the
    # wheel's install must keep it (checked here; set-up would refuse or take another release otherwise).
    make_venv(venv, wheels, (), clean_environ(), extras, first=(f"pyspark=={release}",))
    kept = subprocess.run([str(venv / "bin" / "python"), "-c", "import pyspark; print(pyspark.__version__)"],
                          capture_output=True, text=True, env=clean_environ())  # fmt: skip
    if kept.stdout.strip() != release:
        raise SystemExit(f"matrix: installing the wheel replaced PySpark {release} with {kept.stdout.strip()!r}")
    stamp.write_text(f"{head} {deps}")
    return venv


def harness_env(venv: Path) -> dict[str, str]:
    """The environment ``venv``'s ``harness`` runs in: the checkout's settings left out, its ``bin`` first."""
    return clean_env() | {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
