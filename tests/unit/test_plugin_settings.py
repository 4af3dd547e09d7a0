"""The pytest plugin's settings from a project's ini file, and a missing jar set: a skip naming the command
that fetches it, a failure under ``--harness-strict`` or ``CI=true`` (pytest subprocesses; nothing starts
Spark: the check runs before)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

TESTS = """
import json, os
import pytest


def test_settings_reach_the_environment():
    assert json.loads(os.environ["HARNESS_SPARK_CONFS"]) == {"spark.sql.shuffle.partitions": "3"}
    assert os.environ["HARNESS_CACHE_DIR"].endswith("empty-cache")
    assert os.environ["HARNESS_PACKAGES"] == "com.example:sink_2.13:1.0"


@pytest.mark.chaos(scenario="kafka_file_sink", examples=1, profile="ci", seed=1)
def test_kafka(chaos_run):
    chaos_run().assert_exactly_once()
"""

INI = """
[pytest]
harness_cache_dir = empty-cache
harness_spark_confs =
    spark.sql.shuffle.partitions=3
harness_packages = com.example:sink_2.13:1.0
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for name in ("CI", "HARNESS_CACHE_DIR", "HARNESS_PACKAGES", "HARNESS_SPARK_CONFS", "HARNESS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeini(INI)
    pytester.makepyfile(test_project=TESTS)
    return pytester


def test_a_missing_package_skips_with_the_command_that_fetches_it(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    out = result.stdout.str()
    assert "missing component: packages com.example:sink_2.13:1.0 for PySpark" in out
    assert "harness setup --packages com.example:sink_2.13:1.0`" in out


@pytest.mark.parametrize("strict", [["--harness-strict"], ["CI"]])
def test_strict_or_ci_turns_the_skip_into_a_failure(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, strict: list[str]
) -> None:
    if strict == ["CI"]:
        monkeypatch.setenv("CI", "true")
        strict = []
    result = project.runpytest_subprocess("-p", "no:cacheprovider", *strict)
    result.assert_outcomes(passed=1, failed=1)
    assert "a failure, not a skip" in result.stdout.str()


def test_a_bad_ini_value_stops_the_session_naming_it(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\nharness_spark_confs =\n    no-equals-sign\n")
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == 4  # usage error
    assert "harness_spark_confs: 'no-equals-sign' is not key=value" in result.stderr.str()


def test_the_header_names_the_pyspark_release_and_flags_one_outside_the_range(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata as metadata

    from harness.pytest_plugin import pytest_report_header

    installed = metadata.version("pyspark")
    assert pytest_report_header(None) == f"harness: PySpark {installed}"  # type: ignore[arg-type]
    monkeypatch.setattr(metadata, "version", lambda name: "3.5.9")
    assert pytest_report_header(None) == "harness: PySpark 3.5.9, outside pyspark>=4.0,<4.4"  # type: ignore[arg-type]

    def absent(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", absent)
    assert pytest_report_header(None) == "harness: no pyspark package installed"  # type: ignore[arg-type]
