"""A team's Iceberg pipeline, tested with the harness installed from its wheel on the Spark it runs.

Iceberg's Spark runtime is built per Spark line and Maven Central serves none for 4.2, so the project runs
PySpark 4.1.4: the wheel is installed beside ``pyspark==4.1.4`` into a fresh environment, and ``harness
setup`` fetches the runtime the project's ``pyproject.toml`` names (``harness_packages``) with no ``mvn`` on
``PATH``. Then ``examples/iceberg_project``'s pipeline, written from Iceberg's streaming docs, holds under 2
kills and under its chaos test, and its ``foreachBatch`` append twin is caught with duplicates. The twin's
check also guards the verdict's read: the writer's session caches the table at the snapshot it loaded, and
only a fresh reader sees the batch written twice.

Heavy (about 6 minutes: PySpark 4.1.4 is built from PyPI's sdist); the default suite's representative of an
installed project is ``test_user_project``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.ci_skips import missing
from tests.integration.userenv import ROOT, install_wheel, remove_heavy_parts, run

pytestmark = [pytest.mark.spark, pytest.mark.heavy]

ICEBERG = "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.11.0"


def test_an_iceberg_pipeline_holds_and_its_append_twin_is_caught_on_pyspark_4_1(tmp_path: Path) -> None:
    if shutil.which("java") is None:
        pytest.skip(missing("java"))
    try:
        _check(tmp_path)
    finally:
        remove_heavy_parts(tmp_path)


def _check(tmp_path: Path) -> None:
    user = install_wheel(tmp_path, "pyspark==4.1.4")
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples" / "iceberg_project", project)

    setup = run([user.bin("harness"), "setup"], project, user.env, 1200)
    assert setup.returncode == 0, setup.stderr
    assert "PySpark 4.1.4" in setup.stderr and f"resolving {ICEBERG}" in setup.stderr

    held = run([user.bin("harness"), "run", "pipelines.events_to_iceberg:EVENTS", "--kills", "2", "--seed", "1"],
               project, user.env, 900)  # fmt: skip
    assert held.returncode == 0, held.stdout[-2000:]
    assert "exactly-once held (scenario=pipelines.events_to_iceberg:EVENTS, seed=1)" in held.stdout
    assert "2 kill(s) fired" in held.stdout

    twin = ["pipelines.events_to_iceberg:EVENTS_APPEND", "--kills", "2", "--seed", "1"]
    caught = run([user.bin("harness"), "run", *twin], project, user.env, 900)
    assert caught.returncode == 1, caught.stdout[-2000:]
    assert "exactly-once violated: 33 duplicate" in caught.stdout
    assert "seen 2x, expected 1x; after fault #14 (k2: kill at sink.commit.after of batch 1)" in caught.stdout

    tests = run([user.bin("pytest"), "-q", "-p", "no:cacheprovider", "-rA"], project, user.env, 1800)
    assert tests.returncode == 0, tests.stdout[-3000:]
    assert "PASSED tests/test_events_to_iceberg.py::test_events_reach_iceberg_exactly_once" in tests.stdout
