"""harness/spark/jars.py and releases.py: which cached jars reach Spark, what each release asks for, the
stamps that make a set complete, and the one-line errors that say what to run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.spark import cache as cache_mod
from harness.spark import jars, releases
from scenarios.base import ResourceUnavailable

CONNECTOR = ["spark-sql-kafka-0-10_2.13-{v}", "spark-token-provider-kafka-0-10_2.13-{v}", "spark-tags_2.13-{v}"]
OTHERS = ["kafka-clients-3.9.2", "commons-pool2-2.13.1", "scala-library-2.13.15", "slf4j-api-1.7.36"]
SHIPPED = ["spark-tags_2.13-4.2.0", "scala-library-2.13.18", "slf4j-api-2.0.17", "spark-core_2.13-4.2.0"]


def _fill(directory: Path, stems: list[str], coords: tuple[str, ...]) -> None:
    """A set directory as set-up leaves it: the jars and a stamp naming them and their coordinates."""
    directory.mkdir(parents=True, exist_ok=True)
    for stem in stems:
        (directory / f"{stem}.jar").write_bytes(b"")
    jars.write_stamp(directory, coords, [f"{s}.jar" for s in stems], 1.0)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache holding the Kafka connector for Spark 4.2.0, beside a fake Spark 4.2.0 install; returns the
    directory of that release's sets."""
    spark_home = tmp_path / "spark"
    (spark_home / "jars").mkdir(parents=True)
    for stem in SHIPPED:
        (spark_home / "jars" / f"{stem}.jar").write_bytes(b"")
    monkeypatch.setenv("SPARK_HOME", str(spark_home))
    monkeypatch.setattr(releases, "pyspark_version", lambda: "4.2.0")
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv(jars.PACKAGES_ENV, "")
    root = tmp_path / "cache" / "jars" / "4.2.0"
    stems = [s.format(v="4.2.0") for s in CONNECTOR] + OTHERS
    _fill(root / jars.KAFKA_CONNECTOR, stems, ("org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0",))
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


@pytest.mark.parametrize(
    ("spark", "scala", "connector", "delta"),
    [
        ("4.2.0", "2.13", "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0", "io.delta:delta-spark_4.2_2.13:4.4.0"),
        ("4.1.4", "2.13", "org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.4", "io.delta:delta-spark_4.1_2.13:4.4.0"),
        ("4.0.5", "2.13", "org.apache.spark:spark-sql-kafka-0-10_2.13:4.0.5", "io.delta:delta-spark_4.0_2.13:4.4.0"),
        ("3.5.9", "2.12", "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.9", "io.delta:delta-spark_2.12:3.3.2"),
    ],
)
def test_each_release_asks_for_its_own_connector_and_delta_line(
    spark: str, scala: str, connector: str, delta: str
) -> None:
    release = releases.Release(spark, scala)
    assert release.coordinates(jars.KAFKA_CONNECTOR) == (connector,)
    assert release.coordinates(jars.DELTA) == (delta,)
    assert release.coordinates(jars.KAFKA_BROKER)[0] == "org.apache.kafka:kafka_2.13:4.1.1"


def test_a_spark_line_delta_is_not_built_for_is_unserved_in_one_line() -> None:
    with pytest.raises(releases.Unserved, match=r"no Delta release is built for Spark 4\.3 \(Delta serves 3\.5"):
        releases.Release("4.3.0", "2.13").coordinates(jars.DELTA)


def test_the_connector_brings_only_jars_the_spark_install_does_not_ship(cache: Path) -> None:
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


def test_a_users_spark_jars_are_kept_first_and_not_repeated(cache: Path) -> None:
    ours = jars.spark_jars_conf()["spark.jars"].split(",")
    merged = jars.with_cached_jars({"spark.jars": f"/mine.jar, {ours[0]}", "spark.app.name": "x"})
    assert merged["spark.jars"].split(",") == ["/mine.jar", *ours]
    assert merged["spark.app.name"] == "x"


def test_nothing_cached_no_spark_jars(cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(tmp_path / "empty"))
    assert jars.spark_jars_conf() == {}
    assert jars.with_cached_jars({"spark.ui.enabled": "false"}) == {"spark.ui.enabled": "false"}
    assert jars.with_cached_jars({"spark.jars": "/mine.jar"}) == {"spark.jars": "/mine.jar"}


def test_a_missing_set_is_one_line_naming_the_release_the_cache_and_harness_setup(
    cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(tmp_path / "empty"))
    with pytest.raises(ResourceUnavailable) as info:
        jars.require(jars.KAFKA_BROKER)
    message = str(info.value)
    assert isinstance(info.value, jars.JarsUnavailable) and "\n" not in message
    assert str(tmp_path / "empty" / "jars" / "4.2.0" / "kafka-broker") in message
    assert "PySpark 4.2.0" in message and "harness setup`" in message


def test_a_set_whose_stamp_names_other_coordinates_or_lacks_a_jar_is_missing(cache: Path) -> None:
    directory = cache / jars.KAFKA_CONNECTOR
    assert jars.problem(jars.KAFKA_CONNECTOR) is None
    (directory / "kafka-clients-3.9.2.jar").unlink()  # an interrupted copy
    assert "not in the cache" in (jars.problem(jars.KAFKA_CONNECTOR) or "")
    (directory / "kafka-clients-3.9.2.jar").write_bytes(b"")
    stamp = json.loads((directory / jars.STAMP).read_text())
    stamp["coordinates"] = ["org.apache.spark:spark-sql-kafka-0-10_2.13:4.1.1"]
    (directory / jars.STAMP).write_text(json.dumps(stamp))
    assert "not in the cache" in (jars.problem(jars.KAFKA_CONNECTOR) or "")
    assert jars.spark_jars_conf() == {}


def test_another_pyspark_reads_its_own_directory(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(releases, "pyspark_version", lambda: "4.1.4")
    reason = jars.problem(jars.KAFKA_CONNECTOR) or ""
    assert "PySpark 4.1.4" in reason and str(cache.parent / "4.1.4" / "kafka-connector") in reason
    assert jars.spark_jars_conf() == {}


def test_an_unserved_set_says_so_and_not_run_setup(cache: Path) -> None:
    coords = ("org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0",)
    directory = cache / "other" / jars.KAFKA_BROKER
    jars.write_unserved(directory, coords, "x:y:1 is not served by https://repo/")
    assert jars.unserved_reason(directory, coords) == "x:y:1 is not served by https://repo/"
    assert jars.unserved_reason(directory, ("a:b:2",)) is None


def test_the_broker_set_is_never_filtered_nor_handed_to_spark(cache: Path) -> None:
    stems = ["kafka_2.13-4.1.1", "scala-library-2.13.16", "slf4j-api-2.0.17"]
    _fill(cache / jars.KAFKA_BROKER, stems, releases.KAFKA_BROKER_COORDINATES)
    assert len(jars.require(jars.KAFKA_BROKER)) == 3
    assert "kafka-broker" not in jars.spark_jars_conf()["spark.jars"]


def test_an_unknown_set_names_the_known_ones(cache: Path) -> None:
    with pytest.raises(ValueError, match="known: delta-spark, kafka-broker, kafka-connector, packages"):
        jars.require("delta")


DELTA = ["delta-spark_4.2_2.13-4.4.0", "delta-storage-4.4.0", "delta-kernel-api-4.4.0"]


def test_delta_brings_its_jars_and_its_session_extension(cache: Path) -> None:
    _fill(cache / jars.DELTA, DELTA, ("io.delta:delta-spark_4.2_2.13:4.4.0",))
    conf = jars.with_cached_jars({"spark.sql.extensions": "my.Ext", "spark.sql.catalog.spark_catalog": "my.Cat"})
    paths = conf["spark.jars"].split(",")
    assert any(p.endswith("delta-spark_4.2_2.13-4.4.0.jar") for p in paths)
    assert any(p.endswith("spark-sql-kafka-0-10_2.13-4.2.0.jar") for p in paths)
    # A user's extension stays first and Delta's is added; a user's own catalog is never replaced.
    assert conf["spark.sql.extensions"] == "my.Ext,io.delta.sql.DeltaSparkSessionExtension"
    assert conf["spark.sql.catalog.spark_catalog"] == "my.Cat"
    assert jars.with_cached_jars({})["spark.sql.catalog.spark_catalog"].endswith("DeltaCatalog")


ICEBERG = "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.11.0"


def test_a_teams_packages_reach_every_driver_with_their_extension(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(jars.PACKAGES_ENV, f"{ICEBERG}, com.example:sink:1.0")
    directory = jars.set_dir(jars.PACKAGES)
    assert directory.name.startswith("packages-") and directory.parent == cache
    with pytest.raises(jars.JarsUnavailable) as info:  # named but not fetched: never run without them
        jars.spark_jars_conf()
    assert f"--packages {ICEBERG},com.example:sink:1.0`" in str(info.value)
    _fill(directory, ["iceberg-spark-runtime-4.1_2.13-1.11.0", "sink-1.0"], (ICEBERG, "com.example:sink:1.0"))
    conf = jars.with_cached_jars({"spark.sql.extensions": "my.Ext"})
    assert conf["spark.sql.extensions"] == "my.Ext,org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    assert conf["spark.jars"].split(",")[-2:] == [str(directory / "iceberg-spark-runtime-4.1_2.13-1.11.0.jar"),
                                                  str(directory / "sink-1.0.jar")]  # fmt: skip


@pytest.mark.parametrize("bad", ["iceberg", "a:b", "a:b:c:d", "a b:c:1"])
def test_a_malformed_package_coordinate_is_named(bad: str) -> None:
    with pytest.raises(ValueError, match="is not a Maven coordinate GROUP:ARTIFACT:VERSION"):
        releases.parse_coordinates(f"g:a:1,{bad}")


def test_setup_command_names_the_console_script_only_when_it_is_this_environments(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert cache_mod.setup_command("--offline").endswith(" -m harness setup --offline")
    script = Path(cache_mod.sys.executable).absolute().parent / "harness"
    monkeypatch.setattr("shutil.which", lambda name: str(script))
    assert cache_mod.setup_command() == "harness setup"


def test_the_cache_follows_the_environment_and_the_platform(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(tmp_path / "c"))
    assert cache_mod.cache_dir() == tmp_path / "c"
    monkeypatch.delenv(cache_mod.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(cache_mod.sys, "platform", "linux")
    assert cache_mod.cache_dir() == tmp_path / "xdg" / "spark-exactly-once-harness"
