"""The harness as a dependency of another project, the way a team installs it: nothing of this repository
but its wheel.

The wheel is built from this checkout and installed into a fresh virtual environment outside it; ``harness
setup`` runs there with no ``mvn`` on ``PATH``, into a cache of its own (Ivy's download cache shared with the
user's, so the jars are resolved, not copied, without downloading them again); then, from a project
directory holding only ``examples/user_project`` (a Kafka -> Delta pipeline whose ``foreachBatch`` MERGE is
not wrapped by hand, and its chaos test) and the README's pytest example, ``pytest`` passes and ``harness run
<module>:<ATTR> --kills 2`` holds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.spark.cache import cache_dir
from tests.ci_skips import missing

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]


def _readme_example() -> str:
    """The README's pytest example, as a user copies it."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## Use it in your project")
    return readme[start:].split("```python\n", 1)[1].split("```", 1)[0]


def _path_without_mvn(shims: Path) -> str:
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


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    print(f"$ {' '.join(cmd)}  (exit {done.returncode})\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def test_a_project_installs_the_wheel_sets_up_without_maven_and_tests_a_kafka_delta_pipeline(tmp_path: Path) -> None:
    if shutil.which("java") is None:
        pytest.skip(missing("java"))
    try:
        _install_set_up_and_test(tmp_path)
    finally:  # 1.3 GB: the environment and the class-data archive go; the project and the logs stay
        shutil.rmtree(tmp_path / "venv", ignore_errors=True)
        shutil.rmtree(tmp_path / "cache" / "cds", ignore_errors=True)


def _install_set_up_and_test(tmp_path: Path) -> None:
    python = getattr(sys, "_base_executable", None) or sys.executable
    # Nothing of this repository reaches the new environment or the project: not its packages (a session's
    # Spark puts the checkout on PYTHONPATH, where pip would find the editable install and install nothing),
    # its venv or its settings.
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "PYTHON", "VIRTUAL_ENV", "HARNESS_"))}
    wheels, venv, project, cache = tmp_path / "wheels", tmp_path / "venv", tmp_path / "project", tmp_path / "cache"
    build = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
                 tmp_path, clean, 600)  # fmt: skip
    assert build.returncode == 0
    wheel = next(wheels.glob("spark_exactly_once_harness-*.whl"))
    assert _run([python, "-m", "venv", str(venv)], tmp_path, clean, 300).returncode == 0
    install = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    str(wheel)], tmp_path, clean, 1200)  # fmt: skip
    assert install.returncode == 0
    env = dict(clean)
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{_path_without_mvn(tmp_path / 'shims')}", HARNESS_CACHE_DIR=str(cache))
    cache.mkdir()
    if (cache_dir() / "ivy").is_dir():  # Ivy's downloads only: every set is resolved again, here
        (cache / "ivy").symlink_to(cache_dir() / "ivy")
    shutil.copytree(ROOT / "examples" / "user_project", project)
    (project / "tests" / "integration").mkdir()
    (project / "tests" / "integration" / "test_user_pipeline.py").write_text(_readme_example())

    setup = _run([str(venv / "bin" / "harness"), "setup"], project, env, 1200)
    assert setup.returncode == 0, setup.stderr
    for jar_set in ("kafka-connector", "delta-spark", "kafka-broker"):
        assert f"setup: {jar_set}" in setup.stderr and "jars (" in setup.stderr
    assert not any(venv.rglob(".jars")) and not any(project.rglob(".jars"))  # all of it went to the cache
    again = _run([str(venv / "bin" / "harness"), "setup", "--offline"], project, env, 300)
    assert again.returncode == 0 and "already in the cache: kafka-connector, delta-spark, kafka-broker" in again.stderr

    tests = _run([str(venv / "bin" / "pytest"), "-q", "-p", "no:cacheprovider", "-rA"], project, env, 1800)
    assert tests.returncode == 0, tests.stdout[-3000:]
    passed = [line for line in tests.stdout.splitlines() if line.startswith("PASSED ")]
    assert sorted(line.rsplit("::", 1)[1] for line in passed) == [
        "test_my_pipeline_is_exactly_once",
        "test_orders_reach_delta_exactly_once",
    ]

    run = _run([str(venv / "bin" / "harness"), "run", "pipelines.orders_to_delta:ORDERS", "--kills", "2",
                "--seed", "4"], project, env, 900)  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:]
    assert "exactly-once held (scenario=pipelines.orders_to_delta:ORDERS" in run.stdout
    assert run.stdout.count(" k1: kill at ") + run.stdout.count(" k2: kill at ") == 2
