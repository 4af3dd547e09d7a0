"""The harness as a dependency of another project, the way a team installs it: nothing of this repository
but its wheel.

The wheel is built from this checkout and installed into a fresh virtual environment outside it that holds the
oldest PySpark the harness supports already (the project's own pin, which the wheel must keep: this is the
default suite's smoke of that release; ``bin/test-matrix`` measures every release); ``harness setup`` runs
there with no ``mvn`` on ``PATH``, into a cache of its own (Ivy's download cache shared with the user's, so
the jars are resolved, not copied, without downloading them again); then, from a project directory holding
only ``examples/user_project`` (a Kafka -> Delta pipeline whose ``foreachBatch`` MERGE is not wrapped by
hand, and its chaos test) and the README's pytest example, ``pytest`` passes; in the heavy tier, ``harness
run <module>:<ATTR> --kills 2`` holds there too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.spark.cds import CDS_ENV
from tests.ci_skips import missing
from tests.integration.userenv import install_wheel, remove_heavy_parts, run
from tests.matrix import RELEASES

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]


def _readme_example() -> str:
    """The README's pytest example, as a user copies it."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## Use it in your project")
    return readme[start:].split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize(
    "with_run",
    # CI time: `harness run --kills 2` of the pipeline whose chaos test the project's pytest just ran (Kafka and
    # Delta under kills, through the plugin) costs the default suite ~65 s more; the heavy tier runs it too.
    [pytest.param(False, id="pytest"), pytest.param(True, id="pytest-and-run", marks=pytest.mark.heavy)],
)
def test_a_project_installs_the_wheel_sets_up_without_maven_and_tests_a_kafka_delta_pipeline(
    tmp_path: Path, with_run: bool
) -> None:
    if shutil.which("java") is None:
        pytest.skip(missing("java"))
    try:
        _install_set_up_and_test(tmp_path, with_run)
    finally:
        remove_heavy_parts(tmp_path)


def _install_set_up_and_test(tmp_path: Path, with_run: bool) -> None:
    oldest = RELEASES[0]
    user = install_wheel(tmp_path, first=(f"pyspark=={oldest}",))
    venv, env, project = user.venv, user.env, tmp_path / "project"
    kept = run([str(venv / "bin" / "python"), "-c", "import pyspark; print(pyspark.__version__)"], tmp_path, env, 60)
    assert kept.stdout.strip() == oldest, kept.stdout + kept.stderr  # the project's PySpark, not another
    # No class-data archive: its build (~50 s; every clean set-up of this checkout builds one, bin/_venv.sh)
    # costs this test more than the few drivers it starts save. Set-up says so and builds none.
    env = {**env, CDS_ENV: "0"}
    shutil.copytree(ROOT / "examples" / "user_project", project)
    (project / "tests" / "integration").mkdir()
    (project / "tests" / "integration" / "test_user_pipeline.py").write_text(_readme_example())

    setup = run([str(venv / "bin" / "harness"), "setup"], project, env, 1200)
    assert setup.returncode == 0, setup.stderr
    for jar_set in ("kafka-connector", "delta-spark", "kafka-broker"):
        assert f"setup: {jar_set}" in setup.stderr and "jars (" in setup.stderr
    assert "cds: off (HARNESS_CDS=0)" in setup.stderr and not (tmp_path / "cache" / "cds").exists()
    assert not any(venv.rglob(".jars")) and not any(project.rglob(".jars"))  # all of it went to the cache
    again = run([str(venv / "bin" / "harness"), "setup", "--offline"], project, env, 300)
    assert again.returncode == 0 and "already in the cache: kafka-connector, delta-spark, kafka-broker" in again.stderr

    tests = run([str(venv / "bin" / "pytest"), "-q", "-p", "no:cacheprovider", "-rA"], project, env, 1800)
    assert tests.returncode == 0, tests.stdout[-3000:]
    passed = [line for line in tests.stdout.splitlines() if line.startswith("PASSED ")]
    assert sorted(line.rsplit("::", 1)[1] for line in passed) == [
        "test_my_pipeline_is_exactly_once",
        "test_orders_reach_delta_exactly_once",
    ]

    if not with_run:
        return
    done = run([str(venv / "bin" / "harness"), "run", "pipelines.orders_to_delta:ORDERS", "--kills", "2",
                "--seed", "4"], project, env, 900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    assert "exactly-once held (scenario=pipelines.orders_to_delta:ORDERS" in done.stdout
    assert done.stdout.count(" k1: kill at ") + done.stdout.count(" k2: kill at ") == 2
