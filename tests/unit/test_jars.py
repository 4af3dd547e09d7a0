"""harness/spark/jars.py: which cached jars reach Spark, version parsing, and the one-line errors that say
what to run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.spark import jars
from scenarios.base import ResourceUnavailable

CONNECTOR = ["spark-sql-kafka-0-10_2.13-{v}", "spark-token-provider-kafka-0-10_2.13-{v}", "spark-tags_2.13-{v}"]
OTHERS = ["kafka-clients-3.9.2", "commons-pool2-2.13.1", "scala-library-2.13.15", "slf4j-api-1.7.36"]
SHIPPED = ["spark-tags_2.13-4.2.0", "scala-library-2.13.18", "slf4j-api-2.0.17", "spark-core_2.13-4.2.0"]


def _touch(directory: Path, stems: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for stem in stems:
        (directory / f"{stem}.jar").write_bytes(b"")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A jar cache holding a connector built for Spark 4.2.0, beside a fake Spark 4.2.0 install."""
    spark_home = tmp_path / "spark"
    _touch(spark_home / "jars", SHIPPED)
    monkeypatch.setenv("SPARK_HOME", str(spark_home))
    monkeypatch.setattr(jars, "pyspark_version", lambda: "4.2.0")
    root = tmp_path / "cache"
    monkeypatch.setenv(jars.JARS_DIR_ENV, str(root))
    _touch(root / jars.KAFKA_CONNECTOR, [s.format(v="4.2.0") for s in CONNECTOR] + OTHERS)
    return root


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("spark-sql-kafka-0-10_2.13-4.2.0.jar", ("spark-sql-kafka-0-10_2.13", "4.2.0")),
        ("zstd-jni-1.5.6-10.jar", ("zstd-jni", "1.5.6-10")),
        ("scala-parallel-collections_2.13-1.2.0.jar", ("scala-parallel-collections_2.13", "1.2.0")),
        ("delta-spark_4.2_2.13-4.4.0.jar", ("delta-spark_4.2_2.13", "4.4.0")),
        ("json-20231013.jar", ("json", "20231013")),
        ("thing-2.0.0-M1.jar", ("thing", "2.0.0-M1")),
        ("no-version.jar", None),
        ("kafka-clients-3.9.2.pom", None),
    ],
)
def test_artifact_and_version_from_a_jar_file_name(name: str, expected: tuple[str, str] | None) -> None:
    assert jars.artifact_of(name) == expected


def test_the_connector_brings_only_jars_pyspark_does_not_ship(cache: Path) -> None:
    names = [j.name for j in jars.connector_jars(jars.KAFKA_CONNECTOR)]
    assert names == [
        "commons-pool2-2.13.1.jar",
        "kafka-clients-3.9.2.jar",
        "spark-sql-kafka-0-10_2.13-4.2.0.jar",
        "spark-token-provider-kafka-0-10_2.13-4.2.0.jar",
    ]


def test_spark_jars_conf_lists_them_comma_separated(cache: Path) -> None:
    conf = jars.spark_jars_conf()
    assert list(conf) == ["spark.jars"]
    paths = conf["spark.jars"].split(",")
    assert len(paths) == 4 and all(Path(p).is_absolute() and Path(p).parent == cache / "kafka-connector" for p in paths)
    assert jars.spark_version_of(jars.KAFKA_CONNECTOR) == "4.2.0"


def test_a_users_spark_jars_are_kept_first_and_not_repeated(cache: Path) -> None:
    ours = jars.spark_jars_conf()["spark.jars"].split(",")
    merged = jars.with_cached_jars({"spark.jars": f"/mine.jar, {ours[0]}", "spark.app.name": "x"})
    assert merged["spark.jars"].split(",") == ["/mine.jar", *ours]
    assert merged["spark.app.name"] == "x"


def test_nothing_cached_no_spark_jars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jars.JARS_DIR_ENV, str(tmp_path / "empty"))
    assert jars.spark_jars_conf() == {}
    assert jars.with_cached_jars({"spark.ui.enabled": "false"}) == {"spark.ui.enabled": "false"}
    assert jars.with_cached_jars({"spark.jars": "/mine.jar"}) == {"spark.jars": "/mine.jar"}


def test_a_missing_set_is_one_line_naming_the_directory_and_what_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(jars.JARS_DIR_ENV, str(tmp_path / "empty"))
    with pytest.raises(ResourceUnavailable) as info:
        jars.require(jars.KAFKA_BROKER)
    message = str(info.value)
    assert isinstance(info.value, jars.JarsUnavailable) and "\n" not in message
    assert str(tmp_path / "empty" / "kafka-broker") in message and "bin/test" in message
    assert "bash bin/_jars.sh" in message


def test_a_connector_for_another_spark_is_refused_and_left_out(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jars, "pyspark_version", lambda: "4.3.0")
    with pytest.raises(jars.JarsUnavailable, match=r"built for Spark 4\.2\.0, but pyspark is 4\.3\.0") as info:
        jars.require(jars.KAFKA_CONNECTOR)
    assert "jars/pom.xml" in str(info.value) and "\n" not in str(info.value)
    assert jars.spark_jars_conf() == {}


def test_the_broker_set_is_never_filtered_nor_version_checked(cache: Path) -> None:
    _touch(cache / jars.KAFKA_BROKER, ["kafka_2.13-4.1.1", "scala-library-2.13.16", "slf4j-api-2.0.17"])
    assert len(jars.require(jars.KAFKA_BROKER)) == 3
    assert "kafka-broker" not in jars.spark_jars_conf()["spark.jars"]


def test_an_unknown_set_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: delta-spark, kafka-broker, kafka-connector"):
        jars.require("delta")


DELTA = ["delta-spark_{s}_2.13-4.4.0", "delta-storage-4.4.0", "delta-kernel-api-4.4.0", "antlr4-runtime-4.13.1"]


def test_delta_brings_its_jars_and_its_session_extension(cache: Path) -> None:
    _touch(cache / jars.DELTA, [d.format(s="4.2") for d in DELTA])
    assert jars.spark_version_of(jars.DELTA) == "4.2"
    conf = jars.with_cached_jars({"spark.sql.extensions": "my.Ext", "spark.sql.catalog.spark_catalog": "my.Cat"})
    paths = conf["spark.jars"].split(",")
    assert any(p.endswith("delta-spark_4.2_2.13-4.4.0.jar") for p in paths)
    assert any(p.endswith("spark-sql-kafka-0-10_2.13-4.2.0.jar") for p in paths)
    # A user's extension stays first and Delta's is added; a user's own catalog is never replaced.
    assert conf["spark.sql.extensions"] == "my.Ext,io.delta.sql.DeltaSparkSessionExtension"
    assert conf["spark.sql.catalog.spark_catalog"] == "my.Cat"
    assert jars.with_cached_jars({})["spark.sql.catalog.spark_catalog"].endswith("DeltaCatalog")


@pytest.mark.parametrize(
    ("stem", "built_for"),
    [("delta-spark_4.1_2.13-4.4.0", "4.1"), ("delta-spark_2.13-4.0.1", "4.0"), ("delta-spark_2.13-3.3.2", "3.5")],
)
def test_delta_for_another_spark_is_refused_in_one_line_and_gets_no_confs(
    cache: Path, stem: str, built_for: str
) -> None:
    _touch(cache / jars.DELTA, [stem])
    with pytest.raises(jars.JarsUnavailable, match=rf"built for Spark {re.escape(built_for)}, but pyspark is 4\.2\.0"):
        jars.require(jars.DELTA)
    assert "spark.sql.extensions" not in jars.with_cached_jars({})


def test_delta_without_a_spark_version_in_its_name_is_for_spark_4_2_from_delta_4_1_on(cache: Path) -> None:
    _touch(cache / jars.DELTA, ["delta-spark_2.13-4.4.0"])
    assert jars.problem(jars.DELTA) is None
