"""harness setup's pure parts: how Ivy's output becomes one line, the project's ini options, and offline
set-up naming what the cache lacks (no JVM, no network)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.spark import cache as cache_mod
from harness.spark import ivy, jars, project, releases
from harness.spark.cds import CDS_ENV
from harness.spark.setup import SetupFailed, fetch, run_setup

URL = "https://repo.example/maven2/"

NOT_FOUND = """:: problems summary ::
:::: WARNINGS
		module not found: org.example#nope;1.0
		::          UNRESOLVED DEPENDENCIES         ::
		:: org.example#nope;1.0: not found
"""
REFUSED = """	CLIENT ERROR: Not Found url=https://repo.example/maven2/a/b/1/b-1.pom
	CLIENT ERROR: Forbidden url=https://repo.example/maven2/org/example/x/1.0/x-1.0.pom
		:: org.example#x;1.0: not found
"""
UNREACHABLE = "Server access error at url https://repo.example/maven2/x.pom (java.net.UnknownHostException: repo)\n"


def test_a_coordinate_no_registry_serves_is_named_as_such() -> None:
    why, not_served = ivy.explain(NOT_FOUND, ["org.example:nope:1.0"], [URL])
    assert (why, not_served) == (f"org.example:nope:1.0 is not served by {URL}", True)


def test_a_missing_dependency_names_what_asked_for_it() -> None:
    why, _ = ivy.explain(NOT_FOUND, ["com.acme:sink:2.0"], [URL])
    assert why == f"org.example:nope:1.0 (a dependency of com.acme:sink:2.0) is not served by {URL}"


def test_a_registry_refusing_is_named_with_its_status_not_as_not_found() -> None:
    why, not_served = ivy.explain(REFUSED, ["org.example:x:1.0"], [URL])
    assert not not_served
    assert why == "the registry refused https://repo.example/maven2/org/example/x/1.0/x-1.0.pom: Forbidden"


def test_an_unreachable_registry_says_what_to_do() -> None:
    why, not_served = ivy.explain(UNREACHABLE, ["a:b:1"], [URL])
    assert not not_served and "cannot reach https://repo.example/maven2/x.pom" in why and "--repository" in why


def test_registries_come_from_the_caller_the_environment_or_central(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ivy.REPOSITORIES_ENV, raising=False)
    assert ivy.repositories() == (ivy.CENTRAL,)
    monkeypatch.setenv(ivy.REPOSITORIES_ENV, "https://a/m2, https://b/")
    assert ivy.repositories() == ("https://a/m2/", "https://b/")
    assert ivy.repositories(["https://c"]) == ("https://c/",)


def test_ivy_module_excludes_what_spark_ships_and_maps_runtime_scope() -> None:
    text = ivy._module(["g:a:1"], ["scala-library", "hadoop-client-api"])
    assert 'org="g" name="a" rev="1" conf="default->default(runtime)"' in text
    assert '<exclude module="hadoop-client-api"/>' in text and '<exclude module="scala-library"/>' in text


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(releases, "pyspark_version", lambda: "4.2.0")
    monkeypatch.setenv(jars.PACKAGES_ENV, "")  # recorded, so what fetch() sets is undone after the test
    return tmp_path / "cache"


def test_offline_with_an_empty_cache_names_every_set_and_the_command(empty_cache: Path) -> None:
    with pytest.raises(SetupFailed) as info:
        fetch(offline=True, packages=("com.acme:sink:2.0",), echo=lambda m: None)
    message = str(info.value)
    assert "\n" not in message and str(empty_cache) in message
    for name in ("kafka-connector", "delta-spark", "kafka-broker", "packages (com.acme:sink:2.0)"):
        assert name in message
    assert "harness setup --packages com.acme:sink:2.0`" in message


def _fill_cache() -> None:
    """Every built-in jar set stamped complete in the cache (no jars: set-up only reads the stamps offline)."""
    release = releases.current()
    for name in releases.BUILT_IN:
        directory = jars.set_dir(name, release)
        directory.mkdir(parents=True)
        jars.write_stamp(directory, release.coordinates(name), [], 0.0)


def test_offline_with_a_complete_cache_is_a_no_op(empty_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fill_cache()
    lines: list[str] = []
    assert run_setup(offline=True, cds=False, echo=lines.append) == 0
    assert "already in the cache: kafka-connector, delta-spark, kafka-broker" in "\n".join(lines)


def test_with_cds_off_setup_builds_no_archive(empty_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.spark.cds_build as cds_build

    _fill_cache()
    built: list[str] = []
    monkeypatch.setattr(cds_build, "ensure_archive", lambda echo: built.append("built"))
    monkeypatch.setenv(CDS_ENV, "0")
    lines: list[str] = []
    assert run_setup(offline=True, echo=lines.append) == 0
    assert built == [] and "cds: off (HARNESS_CDS=0)" in "\n".join(lines)
    monkeypatch.setenv(CDS_ENV, "1")
    assert run_setup(offline=True, echo=lines.append) == 0
    assert built == ["built"]


def test_setup_exits_2_with_one_line(empty_cache: Path) -> None:
    lines: list[str] = []
    assert run_setup(offline=True, cds=False, echo=lines.append) == 2
    assert lines[-1].startswith("harness: setup: offline, and the cache")


def test_the_project_ini_options_reach_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for option in project.OPTIONS.values():
        monkeypatch.setenv(option[0], "")  # empty reads as unset; recorded, so the export is undone after the test
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nharness_packages = ["a:b:1", "c:d:2"]\nharness_offline = true\n'
        'harness_spark_confs = ["spark.sql.shuffle.partitions=3", "spark.x = a=b"]\n'
        f'harness_cache_dir = "{tmp_path / "c"}"\n'
    )
    (tmp_path / "pkg").mkdir()
    monkeypatch.setenv(jars.PACKAGES_ENV, "x:y:9")  # the environment wins over the file
    assert project.load_project_settings(tmp_path / "pkg") == tmp_path / "pyproject.toml"
    assert os.environ[jars.PACKAGES_ENV] == "x:y:9"
    assert cache_mod.offline() and cache_mod.cache_dir() == tmp_path / "c"
    assert project.spark_confs() == {"spark.sql.shuffle.partitions": "3", "spark.x": "a=b"}


def test_a_pytest_ini_wins_over_a_pyproject_beside_it_and_bad_confs_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(project.SPARK_CONFS_ENV, "")
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\nharness_spark_confs = ['a=1']\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nharness_spark_confs =\n    b=2\n    no-equals\n")
    with pytest.raises(ValueError, match=r"pytest\.ini harness_spark_confs: 'no-equals' is not key=value"):
        project.load_project_settings(tmp_path)
    monkeypatch.setenv(project.SPARK_CONFS_ENV, json.dumps(["not", "an", "object"]))
    with pytest.raises(ValueError, match="must be a JSON object"):
        project.spark_confs()


def test_a_pyproject_without_a_pytest_section_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text("[tool.black]\n")
    found = project.find_settings(tmp_path / "sub")
    assert found is None or found[0] not in (tmp_path / "pyproject.toml", tmp_path / "sub" / "pyproject.toml")


def test_earlier_patches_of_the_line_newest_first() -> None:
    assert [r.spark for r in releases.Release("4.1.4", "2.13").earlier_patches()] == [
        "4.1.3",
        "4.1.2",
        "4.1.1",
        "4.1.0",
    ]
    assert releases.Release("4.2.0", "2.13").earlier_patches() == []
    assert releases.Release("4.3.0-preview1", "2.13").earlier_patches() == []


def test_a_connector_not_served_for_the_patch_is_taken_from_the_newest_earlier_one_served(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PySpark 4.1.4 before its Kafka connector is on Maven: 4.1.3 is not either, 4.1.2 is. The set is asked for
    as 4.1.4 (so the next set-up and every run find it complete) and says what it was resolved from."""
    monkeypatch.setattr(releases, "pyspark_version", lambda: "4.1.4")
    monkeypatch.setattr(jars, "shipped_artifacts", lambda: frozenset())
    served = "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.2"
    asked: list[str] = []

    def resolve(coords: list[str], target: Path, **kw: object) -> ivy.Resolution:
        asked.append(coords[0])
        if coords[0].startswith("org.apache.spark:spark-sql-kafka") and coords[0] != served:
            raise ivy.ResolveError(f"{coords[0]} is not served by {URL}", not_served=True)
        target.mkdir(parents=True, exist_ok=True)
        (target / "x.jar").write_text("")
        return ivy.Resolution((target / "x.jar",), 1, 0.1)

    monkeypatch.setattr(ivy, "resolve", resolve)
    lines: list[str] = []
    fetch(offline=False, packages=(), echo=lines.append)
    kafka = [a for a in asked if "spark-sql-kafka" in a]
    assert kafka == [f"org.apache.spark:spark-sql-kafka-0-10_2.13:{v}" for v in ("4.1.4", "4.1.3", "4.1.2")]
    assert any("4.1.4 is not served yet; " + served in line for line in lines), lines
    release = releases.current()
    directory = jars.set_dir("kafka-connector", release)
    assert jars.is_complete(directory, release.coordinates("kafka-connector"))
    assert jars.read_stamp(directory)["resolved"] == [served]  # type: ignore[index]
    assert jars.problem("kafka-connector") is None


def test_a_connector_no_patch_of_the_line_is_served_for_is_unserved(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(releases, "pyspark_version", lambda: "4.3.1")
    monkeypatch.setattr(jars, "shipped_artifacts", lambda: frozenset())

    def resolve(coords: list[str], target: Path, **kw: object) -> ivy.Resolution:
        if "spark-sql-kafka" in coords[0]:
            raise ivy.ResolveError(f"{coords[0]} is not served by {URL}", not_served=True)
        target.mkdir(parents=True, exist_ok=True)
        return ivy.Resolution((), 0, 0.1)

    monkeypatch.setattr(ivy, "resolve", resolve)
    lines: list[str] = []
    steps = fetch(offline=False, packages=(), echo=lines.append)
    [kafka] = [s for s in steps if s.name == "kafka-connector"]
    assert kafka.status == "unserved" and "4.3.1 is not served" in kafka.note, kafka
    assert "cannot be had for PySpark 4.3.1" in (jars.problem("kafka-connector") or "")


def test_delta_without_its_python_api_is_refused_naming_the_extra(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "delta" else real(name, *a))
    reason = jars.python_api_problem("delta-spark") or ""
    assert "delta-spark package) is not installed" in reason and "spark-exactly-once-harness[delta]" in reason
    assert "\n" not in reason and jars.python_api_problem("kafka-connector") is None
    from scenarios import all_scenarios
    from scenarios.kafka.preflight import scenario_problem

    said = scenario_problem(all_scenarios()["foreachbatch_delta_merge"]) or ""
    assert said.startswith("scenario foreachbatch_delta_merge cannot run here: ") and "[delta]" in said


def test_the_supported_range_is_pyprojects_and_a_release_outside_it_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import tomllib

    from harness.cli.main import main

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert releases.SUPPORTED in pyproject["project"]["dependencies"]
    assert [releases.unsupported(v) is None for v in ("4.0.5", "4.1.4", "4.2.0", "4.3.0", "4.4.0", "3.5.9")] == [
        True, True, True, True, False, False
    ]  # fmt: skip
    monkeypatch.setattr(releases, "pyspark_version", lambda: "3.5.9")
    assert main(["run", "file_sink_stateless", "--kills", "1"]) == 2  # refused before anything starts
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PySpark 3.5.9 is outside the range the harness supports (pyspark>=4.0,<4.4)" in err
    # The listing loads the scenario library (PySpark 4's data source API): refused as well, before any import.
    assert main(["list"]) == 2 and "outside the range" in capsys.readouterr().err
    # The checkpoint reader starts no Spark and imports nothing of PySpark 4: it serves any release.
    assert main(["inspect", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "outside the range" not in err and "does not exist" in err


def test_a_release_no_delta_build_serves_is_named_before_the_missing_python_api(
    empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from scenarios import all_scenarios
    from scenarios.kafka.preflight import scenario_problem

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "delta" else real(name, *a))
    monkeypatch.setattr(releases, "pyspark_version", lambda: "4.3.0")
    said = scenario_problem(all_scenarios()["foreachbatch_delta_merge"]) or ""
    # Installing delta-spark would not help on 4.3 (no Delta build for it): that is what the line must say.
    assert said.startswith("scenario foreachbatch_delta_merge cannot run here: jar set 'delta-spark' cannot be had")
    assert "no Delta release is built for Spark 4.3" in said and "pip install" not in said
    monkeypatch.setattr(releases, "pyspark_version", lambda: "4.2.0")  # a release Delta serves: the extra is named
    assert "[delta]" in (scenario_problem(all_scenarios()["foreachbatch_delta_merge"]) or "")
