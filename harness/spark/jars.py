"""Jars resolved from Maven at set-up, and the ones every driver gets through ``spark.jars``.

- Set-up (``bin/_jars.sh``, run by ``bin/test`` and ``bin/demo``) resolves each profile of ``jars/pom.xml``
  into ``.jars/<set>/`` (:data:`JARS_DIR`; ``$HARNESS_JARS_DIR`` overrides it). Nothing here downloads.
- ``kafka-connector``: Spark's Kafka source and sink. Drivers get only the jars whose artifact pyspark does
  not ship (``pyspark/jars/``): the others would put a second, older copy of its classes on the class path.
  The set is used only when its Spark version (read from the connector jar's name) equals pyspark's.
- ``delta-spark``: Delta Lake for Spark, with its session extension and catalog (:attr:`JarSet.confs`, given to
  every driver with the jars: ``spark.sql.extensions`` is a static conf, and MERGE/``DeltaTable`` need it). Its
  Spark version is in the artifact id (``delta-spark_4.2_2.13``), compared with pyspark's major.minor.
- ``kafka-broker``: the classpath of the test broker (:mod:`scenarios.kafka.broker`), never given to Spark.
- Jars given with ``spark.jars`` are loaded by Spark's own class loader, not the JVM's class path, so the
  driver's class-data archive (:mod:`harness.spark.cds`) stays valid with or without them.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scenarios.base import ResourceUnavailable

JARS_DIR_ENV = "HARNESS_JARS_DIR"
_ROOT = Path(__file__).resolve().parents[2]
#: Where set-up puts the jar sets (read when this module is imported; :func:`jars_dir` reads it anew).
JARS_DIR = Path(os.environ.get(JARS_DIR_ENV) or _ROOT / ".jars")
#: What to run when a set is missing.
FETCH_HINT = "run bin/test, or `bash bin/_jars.sh` alone (needs java and mvn)"

KAFKA_CONNECTOR = "kafka-connector"
KAFKA_BROKER = "kafka-broker"
DELTA = "delta-spark"

#: Delta's static session confs, set on every driver that gets the Delta jars (extended, never replaced, when a
#: user names extensions of their own).
DELTA_CONFS: dict[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # Delta rebuilds a table's snapshot after every commit in 50 tasks by default: 4.3 s a commit on a local[2]
    # driver here, 0.7 s with one (measured, 8 appends). Delta's own test suites set it small too; it changes
    # no result.
    "spark.databricks.delta.snapshotPartitions": "1",
}


@dataclass(frozen=True)
class JarSet:
    """One profile of ``jars/pom.xml``: ``marker`` is the artifact that must be there (or, with
    ``spark_in_artifact``, the artifact id's start: ``delta-spark`` matches ``delta-spark_4.2_2.13``); ``for_spark``
    sets go to drivers with ``spark.jars`` (and ``confs``) and are built for the Spark release that is the
    marker's version, or, with ``spark_in_artifact``, the ``major.minor`` in its artifact id."""

    name: str
    marker: str
    for_spark: bool
    spark_in_artifact: bool = False
    confs: Mapping[str, str] = field(default_factory=dict)

    def is_marker(self, artifact: str) -> bool:
        if self.spark_in_artifact:
            return artifact == self.marker or artifact.startswith(self.marker + "_")
        return artifact == self.marker

    def spark_of(self, artifact: str, version: str) -> str:
        """The Spark release (``4.2.0``) or line (``4.2``) the marker ``artifact-version`` is built for."""
        if not self.spark_in_artifact:
            return version
        found = re.fullmatch(re.escape(self.marker) + r"_(\d+\.\d+)_\d+\.\d+", artifact)
        if found:
            return found.group(1)
        # Delta before 4.1 named no Spark version: 3.x is for Spark 3.5, 4.0.x for Spark 4.0; from 4.1 on the
        # name without one means Spark 4.2 (Delta's release notes).
        return "3.5" if version.startswith("3.") else "4.0" if version.startswith("4.0.") else "4.2"


SETS: dict[str, JarSet] = {
    KAFKA_CONNECTOR: JarSet(KAFKA_CONNECTOR, "spark-sql-kafka-0-10_2.13", for_spark=True),
    KAFKA_BROKER: JarSet(KAFKA_BROKER, "kafka_2.13", for_spark=False),
    DELTA: JarSet(DELTA, "delta-spark", for_spark=True, spark_in_artifact=True, confs=DELTA_CONFS),
}


class JarsUnavailable(ResourceUnavailable):
    """A jar set is missing or built for another Spark; the message says what to run."""


def jars_dir() -> Path:
    """The jar cache: ``$HARNESS_JARS_DIR`` if set (read now), else ``.jars`` at the repository root."""
    return Path(os.environ.get(JARS_DIR_ENV) or _ROOT / ".jars")


# A version starts with digits and a dot ("4.2.0", "1.5.6-10") or is all digits ("20231013"); artifact ids
# may hold "-<digit>" themselves ("spark-sql-kafka-0-10_2.13"), so the version is the leftmost such tail.
_VERSION = re.compile(r"\d+\.\d+.*|\d+")


def artifact_of(file_name: str) -> tuple[str, str] | None:
    """``(artifactId, version)`` of a Maven jar file name ``<artifactId>-<version>.jar``; ``None`` if it is
    not one."""
    if not file_name.endswith(".jar"):
        return None
    stem = file_name[: -len(".jar")]
    for i, ch in enumerate(stem):
        if ch == "-" and _VERSION.fullmatch(stem[i + 1 :]):
            return stem[:i], stem[i + 1 :]
    return None


def _artifact_id(jar: Path) -> str:
    found = artifact_of(jar.name)
    return found[0] if found else jar.name


def pyspark_jars_dir() -> Path:
    """The jars of the installed Spark: ``$SPARK_HOME/jars`` if set, else the pyspark package's ``jars/``."""
    home = os.environ.get("SPARK_HOME")
    if home:
        return Path(home) / "jars"
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


@functools.cache
def _shipped(directory: Path) -> frozenset[str]:
    return frozenset(_artifact_id(p) for p in directory.glob("*.jar"))


def pyspark_version() -> str:
    import pyspark

    return str(pyspark.__version__)


def _set_of(name: str) -> JarSet:
    try:
        return SETS[name]
    except KeyError:
        raise ValueError(f"unknown jar set {name!r}; known: {', '.join(sorted(SETS))}") from None


def _jar_files(name: str, root: Path | None) -> list[Path]:
    directory = (root or jars_dir()) / name
    return sorted(directory.glob("*.jar")) if directory.is_dir() else []


def spark_version_of(name: str, *, root: Path | None = None) -> str | None:
    """The Spark release a ``for_spark`` set is built for (:meth:`JarSet.spark_of` its marker jar); ``None`` when
    the set or its marker is missing."""
    jar_set = _set_of(name)
    for jar in _jar_files(name, root):
        found = artifact_of(jar.name)
        if found is not None and jar_set.is_marker(found[0]):
            return jar_set.spark_of(*found)
    return None


def _same_spark(built_for: str | None, have: str) -> bool:
    """``4.2.0`` matches only ``4.2.0``; a line ``4.2`` matches every ``4.2.x``."""
    if built_for is None:
        return False
    return have == built_for or (built_for.count(".") == 1 and have.startswith(built_for + "."))


def problem(name: str, *, root: Path | None = None) -> str | None:
    """Why set ``name`` cannot be used here (one line naming the directory and what to run), or ``None``."""
    jar_set = _set_of(name)
    directory = (root or jars_dir()) / name
    if not any(jar_set.is_marker(_artifact_id(j)) for j in _jar_files(name, root)):
        return f"jar set {name!r} is not in {directory} ({jar_set.marker} missing); {FETCH_HINT}"
    if jar_set.for_spark:
        built_for, have = spark_version_of(name, root=root), pyspark_version()
        if not _same_spark(built_for, have):
            return (
                f"jar set {name!r} in {directory} is built for Spark {built_for}, but pyspark is {have}; "
                f"make jars/pom.xml resolve it for Spark {have} and {FETCH_HINT}"
            )
    return None


def connector_jars(name: str, *, root: Path | None = None) -> list[Path]:
    """The jars of set ``name`` a process needs, sorted: for a ``for_spark`` set only those whose artifact
    pyspark does not ship; for any other set all of them. Empty when the set is missing (no check of its
    version: :func:`require` does that)."""
    jars = _jar_files(name, root)
    if not _set_of(name).for_spark:
        return jars
    shipped = _shipped(pyspark_jars_dir())
    return [j for j in jars if _artifact_id(j) not in shipped]


def require(name: str, *, root: Path | None = None) -> list[Path]:
    """:func:`connector_jars` of set ``name``; :class:`JarsUnavailable` (saying what to run) when the set is
    missing or built for a Spark other than the installed pyspark."""
    reason = problem(name, root=root)
    if reason:
        raise JarsUnavailable(reason)
    return connector_jars(name, root=root)


def usable_for_spark(*, root: Path | None = None) -> list[JarSet]:
    """The ``for_spark`` sets in the cache built for the installed pyspark."""
    return [s for s in SETS.values() if s.for_spark and problem(s.name, root=root) is None]


def spark_jars_conf(*, root: Path | None = None) -> dict[str, str]:
    """``{"spark.jars": "<comma-separated local paths>"}`` of every usable ``for_spark`` set in the cache
    (the Kafka connector, Delta) plus those sets' own confs (Delta's extension and catalog); ``{}`` when there
    is none. A set that is missing or built for another Spark is left out here; :func:`require` names the
    problem where a scenario needs it."""
    usable = usable_for_spark(root=root)
    jars = [str(j) for s in usable for j in connector_jars(s.name, root=root)]
    out: dict[str, str] = {}
    for s in usable:
        out.update(s.confs)
    if jars:
        out["spark.jars"] = ",".join(jars)
    return out


#: Confs whose values are comma-separated lists: a set's value is appended to the user's, not put in its place.
_LIST_CONFS = frozenset({"spark.jars", "spark.sql.extensions"})


def with_cached_jars(confs: Mapping[str, str], *, root: Path | None = None) -> dict[str, str]:
    """``confs`` with :func:`spark_jars_conf` merged in: list confs (``spark.jars``, ``spark.sql.extensions``)
    appended to the caller's own (kept first; a value given twice appears once), any other conf only where
    the caller set none."""
    out = dict(confs)
    for key, ours in spark_jars_conf(root=root).items():
        if key in _LIST_CONFS:
            given = [p.strip() for p in confs.get(key, "").split(",") if p.strip()]
            out[key] = ",".join(dict.fromkeys([*given, *(p for p in ours.split(",") if p)]))
        else:
            out.setdefault(key, ours)
    return out
