"""A fresh environment outside this repository with the harness's wheel installed, as a team installs it.

Nothing of this checkout reaches the environment or the project run in it: not its packages (a session's
Spark puts the checkout on ``PYTHONPATH``, where pip would find the editable install and install nothing),
its venv or its settings. ``harness setup`` runs there with no ``mvn`` on ``PATH``, into a cache of its own
(Ivy's download cache shared with the user's, so jars are resolved, not copied, without downloading them
again).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.spark.cache import cache_dir

ROOT = Path(__file__).resolve().parents[2]


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``, printing its tail (pytest shows it when the test fails)."""
    t0 = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    took = time.monotonic() - t0
    print(f"$ {' '.join(cmd)}  (exit {done.returncode}, {took:.1f} s)\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def path_without_mvn(shims: Path) -> str:
    """``PATH`` with every directory that holds ``mvn`` replaced by a copy of it (symlinks) without it."""
    parts = []
    for i, entry in enumerate(p for p in os.environ["PATH"].split(os.pathsep) if p):
        directory = Path(entry)
        if not (directory / "mvn").exists():
            parts.append(entry)
            continue
        mirror = shims / f"bin{i}"
        mirror.mkdir(parents=True)
        for item in directory.iterdir():
            if item.name != "mvn":
                (mirror / item.name).symlink_to(item)
        parts.append(str(mirror))
    path = os.pathsep.join(parts)
    assert shutil.which("mvn", path=path) is None and shutil.which("java", path=path) is not None
    return path


@dataclass(frozen=True)
class UserEnv:
    """An installed environment: its ``bin`` and the environment variables to run its commands with."""

    venv: Path
    env: dict[str, str]

    def bin(self, name: str) -> str:
        return str(self.venv / "bin" / name)


def clean_environ() -> dict[str, str]:
    """This process's environment without anything that would carry the checkout into another interpreter."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "PYTHON", "VIRTUAL_ENV", "HARNESS_"))}


def build_wheel(wheels: Path, env: dict[str, str]) -> Path:
    """This checkout's wheel, built into ``wheels`` (which must exist)."""
    build = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
                wheels.parent, env, 600)  # fmt: skip
    assert build.returncode == 0
    return next(wheels.glob("spark_exactly_once_harness-*.whl"))


def make_venv(
    venv: Path,
    wheels: Path,
    requirements: tuple[str, ...],
    env: dict[str, str],
    extras: str = "delta",
    first: tuple[str, ...] = (),
) -> None:
    """Build this checkout's wheel into ``wheels`` and install it (with ``extras``, comma-separated; ``""``:
    none) and ``requirements`` into a new ``venv``; ``first`` is installed before the wheel, on its own, as a
    project's own dependencies are (the wheel must keep them)."""
    python = getattr(sys, "_base_executable", None) or sys.executable
    wheel = build_wheel(wheels, env)
    assert run([python, "-m", "venv", str(venv)], wheels.parent, env, 300).returncode == 0
    target = f"{wheel}[{extras}]" if extras else str(wheel)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile"]
    if first:
        assert run([*pip, *first], wheels.parent, env, 1200).returncode == 0
    # --no-compile, as uv installs by default: the modules a run imports are compiled as it imports them, and
    # byte-compiling all of pyspark, pandas and pyarrow cost this install 9 of its 45 s (measured).
    install = run([*pip, target, *requirements], wheels.parent, env, 1200)
    assert install.returncode == 0


def install_wheel(tmp_path: Path, *requirements: str, extras: str = "delta", first: tuple[str, ...] = ()) -> UserEnv:
    """Build this checkout's wheel and install it, with ``extras`` (Delta's Python API by default) and
    ``requirements`` (``pyspark==4.1.4``, say), into a fresh venv under ``tmp_path`` that holds ``first``
    already; set-up's cache is ``tmp_path/cache``."""
    clean = clean_environ()
    venv, cache = tmp_path / "venv", tmp_path / "cache"
    make_venv(venv, tmp_path / "wheels", requirements, clean, extras, first)
    env = dict(clean)
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{path_without_mvn(tmp_path / 'shims')}", HARNESS_CACHE_DIR=str(cache))
    cache.mkdir()
    if (cache_dir() / "ivy").is_dir():  # Ivy's downloads only: every set is resolved again, here
        (cache / "ivy").symlink_to(cache_dir() / "ivy")
    return UserEnv(venv, env)


def remove_heavy_parts(tmp_path: Path) -> None:
    """The environment and the class-data archive (over 1 GB) go; the project and the logs stay."""
    shutil.rmtree(tmp_path / "venv", ignore_errors=True)
    shutil.rmtree(tmp_path / "cache" / "cds", ignore_errors=True)
