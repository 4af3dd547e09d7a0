"""Everything that depends on the Spark release, in one place: which Maven artifacts each jar set is for the
installed PySpark, and which session confs a connector needs.

The release is the installed ``pyspark`` (its version, and the Scala version of the jars it ships); nothing
here installs or replaces it. A set is a list of Maven coordinates ``group:artifact:version`` that
:mod:`harness.spark.ivy` resolves with their dependencies:

- ``kafka-connector``: Spark's Kafka source and sink of exactly the installed release;
- ``delta-spark``: the Delta release built for the installed Spark line (Delta's compatibility table);
- ``kafka-broker``: a KRaft broker for tests, run in its own JVM (any Spark release).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from harness.errors import SetupError

KAFKA_CONNECTOR = "kafka-connector"
KAFKA_BROKER = "kafka-broker"
DELTA = "delta-spark"

#: Delta for each Spark line: Delta 4.4 is built for Spark 4.0, 4.1 and 4.2 (since Delta 4.1 the artifact id
#: carries the Spark line); Delta 3.3 is the last for Spark 3.5 (Scala 2.12 there).
DELTA_FOR_LINE: dict[str, str] = {
    "4.2": "io.delta:delta-spark_4.2_2.13:4.4.0",
    "4.1": "io.delta:delta-spark_4.1_2.13:4.4.0",
    "4.0": "io.delta:delta-spark_4.0_2.13:4.4.0",
    "3.5": "io.delta:delta-spark_2.12:3.3.2",
}

#: The test broker: Kafka's server (Scala 2.13, its own JVM) and the log4j2 binding it logs through. slf4j 2
#: is named because kafka-clients' pom asks for 1.7, which that binding cannot serve.
KAFKA_BROKER_COORDINATES = (
    "org.apache.kafka:kafka_2.13:4.1.1",
    "org.slf4j:slf4j-api:2.0.17",
    "org.apache.logging.log4j:log4j-slf4j2-impl:2.24.3",
    "org.apache.logging.log4j:log4j-core:2.24.3",
)

#: Delta's static session confs (``spark.sql.extensions`` cannot be set after the session starts; MERGE and
#: ``DeltaTable`` need it).
DELTA_CONFS: dict[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # Delta rebuilds a table's snapshot after every commit in 50 tasks by default: 4.3 s a commit on a local[2]
    # driver here, 0.7 s with one (measured, 8 appends). Delta's own test suites set it small too; it changes
    # no result.
    "spark.databricks.delta.snapshotPartitions": "1",
}

#: Session extensions of connectors a team may hand over with ``harness setup --packages``, by the start of
#: the artifact id (as each project's Spark quick start sets them). Catalogs are the team's own confs.
PACKAGE_EXTENSIONS: dict[str, str] = {
    "iceberg-spark-runtime": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    "delta-spark": "io.delta.sql.DeltaSparkSessionExtension",
    "hudi-spark": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "paimon-spark": "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions",
}

_COORDINATE = re.compile(r"[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-+]+")


class Unserved(SetupError, ValueError):
    """No artifact of a jar set exists for this Spark release (the message names the release and the set)."""


@dataclass(frozen=True)
class Release:
    """A Spark release as the installed PySpark is: ``4.2.0`` with Scala ``2.13``."""

    spark: str
    scala: str

    @property
    def line(self) -> str:
        """``4.2`` of ``4.2.0``."""
        return ".".join(self.spark.split(".")[:2])

    def earlier_patches(self) -> list[Release]:
        """The earlier patch releases of this line, newest first (``4.1.3`` ... ``4.1.0`` for ``4.1.4``): Spark's
        Kafka connector is published for a patch release weeks after PySpark is, and any patch of the same line
        runs on it."""
        parts = self.spark.split(".")
        if len(parts) != 3 or not parts[2].isdigit():
            return []
        return [Release(f"{parts[0]}.{parts[1]}.{n}", self.scala) for n in range(int(parts[2]) - 1, -1, -1)]

    def coordinates(self, jar_set: str) -> tuple[str, ...]:
        """The Maven coordinates of ``jar_set`` for this release; :class:`Unserved` when none exists."""
        if jar_set == KAFKA_CONNECTOR:
            return (f"org.apache.spark:spark-sql-kafka-0-10_{self.scala}:{self.spark}",)
        if jar_set == DELTA:
            if self.line not in DELTA_FOR_LINE:
                raise Unserved(f"no Delta release is built for Spark {self.line} (Delta serves {_lines()})")
            return (DELTA_FOR_LINE[self.line],)
        if jar_set == KAFKA_BROKER:
            return KAFKA_BROKER_COORDINATES
        raise ValueError(f"unknown jar set {jar_set!r}; known: {', '.join(sorted(BUILT_IN))}")


#: The built-in jar sets, in the order set-up resolves them.
BUILT_IN = (KAFKA_CONNECTOR, DELTA, KAFKA_BROKER)


def _lines() -> str:
    return ", ".join(sorted(DELTA_FOR_LINE))


def pyspark_jars_dir() -> Path:
    """The jars of the installed Spark: ``$SPARK_HOME/jars`` if set, else the pyspark package's ``jars/``."""
    import os

    home = os.environ.get("SPARK_HOME")
    if home:
        return Path(home) / "jars"
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def pyspark_version() -> str:
    """The installed PySpark's version, from its package's metadata (nothing of pyspark is imported: a
    command that refuses the release must not pay for it); a build without metadata is asked directly."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pyspark")
    except PackageNotFoundError:
        import pyspark

        return str(pyspark.__version__)


#: The PySpark releases the harness runs on, as pyproject.toml's dependency says (a test checks they agree):
#: measured on 4.0.5, 4.1.4, 4.2.0 and 4.3.0 (README.md, "Your Spark", written by bin/test-matrix).
SUPPORTED = "pyspark>=4.0,<4.4"
_SUPPORTED_LINES = ((4, 0), (4, 4))


def unsupported(version: str | None = None) -> str | None:
    """Why the installed PySpark (or ``version``) is outside :data:`SUPPORTED`, in one line; ``None`` inside."""
    try:
        found = version or pyspark_version()
    except ImportError:
        return (
            f"no PySpark is installed; install one inside {SUPPORTED} beside the harness (pip install 'pyspark==4.2.0')"
        )
    try:
        line = tuple(int(part) for part in found.split(".")[:2])
    except ValueError:
        return None  # a development build's version: let it run
    if _SUPPORTED_LINES[0] <= line < _SUPPORTED_LINES[1]:
        return None
    return (
        f"PySpark {found} is outside the range the harness supports ({SUPPORTED}); install one inside it beside "
        "the harness (pip install 'pyspark==4.2.0'); what each release measured: the README's \"Your Spark\""
    )


@functools.cache
def _scala_of(jars: Path) -> str:
    for jar in jars.glob("spark-core_*.jar"):
        found = re.match(r"spark-core_(\d+\.\d+)-", jar.name)
        if found:
            return found.group(1)
    return "2.13"  # every PySpark 4 ships Scala 2.13 jars


def current() -> Release:
    """The installed PySpark's release."""
    return Release(pyspark_version(), _scala_of(pyspark_jars_dir()))


def parse_coordinates(text: str) -> tuple[str, ...]:
    """``g:a:v[,g:a:v...]`` -> the coordinates, in order, each once; ``ValueError`` names a malformed one."""
    out: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if not _COORDINATE.fullmatch(item):
            raise ValueError(f"{item!r} is not a Maven coordinate GROUP:ARTIFACT:VERSION")
        if item not in out:
            out.append(item)
    return tuple(out)


def extension_of(coordinate: str) -> str | None:
    """The session extension a package needs (:data:`PACKAGE_EXTENSIONS`), or ``None``."""
    artifact = coordinate.split(":")[1]
    return next((ext for start, ext in PACKAGE_EXTENSIONS.items() if artifact.startswith(start)), None)
