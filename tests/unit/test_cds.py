"""harness/spark/cds.py: when the driver's JVM options name the class-data archive."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.spark import cds
from tests.ci_skips import missing

BASE = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "spark-driver-x.jsa"
    monkeypatch.setattr(cds, "archive_path", lambda options: path)
    monkeypatch.delenv(cds.CDS_ENV, raising=False)
    return path


def test_an_existing_archive_is_added_to_the_options(archive: Path) -> None:
    archive.write_bytes(b"x")
    assert cds.java_options(BASE) == f"{BASE} -XX:SharedArchiveFile={archive}"


def test_no_archive_no_option(archive: Path) -> None:
    assert cds.java_options(BASE) == BASE


@pytest.mark.parametrize("own", ["-Xshare:off", "-XX:SharedArchiveFile=/mine.jsa", "-XX:ArchiveClassesAtExit=/d.jsa"])
def test_options_that_choose_cds_themselves_are_left_alone(archive: Path, own: str) -> None:
    archive.write_bytes(b"x")
    assert cds.java_options(f"{BASE} {own}") == f"{BASE} {own}"


def test_turned_off_by_the_environment(archive: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive.write_bytes(b"x")
    monkeypatch.setenv(cds.CDS_ENV, "0")
    assert cds.java_options(BASE) == BASE


def test_the_archive_name_depends_on_the_options_not_their_spacing() -> None:
    a, b, c = cds.archive_path(BASE), cds.archive_path(f"  {BASE} "), cds.archive_path("-XX:+UseG1GC")
    if a is None:
        pytest.skip(missing("no java on this machine (apt-get install openjdk-17-jre-headless)"))
    assert a == b and a != c and a.suffix == ".jsa"


def test_the_archive_key_changes_with_the_jars_it_was_dumped_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A venv made again at the same path has jars of the same names and sizes but new modification times;
    the JVM refuses the old archive for them, so they must get a new one (measured: a stale archive was
    silently not loaded, every driver started 2 s slower)."""
    jars = tmp_path / "spark" / "jars"
    jars.mkdir(parents=True)
    jar = jars / "spark-core_2.13-4.2.0.jar"
    jar.write_bytes(b"x")
    monkeypatch.setenv("SPARK_HOME", str(tmp_path / "spark"))
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    first = cds.archive_path("-Xmx1g")
    os.utime(jar, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns + 10**9))
    second = cds.archive_path("-Xmx1g")
    assert first is not None and second is not None and first != second
    assert second.parent == tmp_path / "cache" / "cds"
