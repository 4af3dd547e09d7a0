"""The jars ``harness setup`` put in the cache, and the ones every driver gets through ``spark.jars``.

- A jar set lives in ``<cache>/jars/<pyspark version>/<set>/`` (:mod:`harness.spark.cache`) with a ``.stamp``
  naming the Maven coordinates it was resolved from. A set is usable when its stamp names exactly the
  coordinates :mod:`harness.spark.releases` gives for the installed PySpark, and every jar it lists is there:
  another PySpark, or a half-written set, reads as missing, and the message names the command that fetches it.
- ``kafka-connector`` and ``delta-spark`` go to drivers (with Delta's session confs); ``kafka-broker`` is the
  test broker's class path, never Spark's.
- A team's own connectors (``harness setup --packages G:A:V,...``) are the set ``packages``, resolved together
  and named by a digest of their coordinates; :data:`PACKAGES_ENV` says which a run hands to its drivers.
- Drivers get only the jars whose artifact the Spark install does not ship: the others would put a second,
  other copy of its classes on the class path. Jars given with ``spark.jars`` are loaded by Spark's own class
  loader, so the driver's class-data archive (:mod:`harness.spark.cds`) stays valid with or without them.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.spark.cache import cache_dir, setup_command
from harness.spark.releases import (
    BUILT_IN,
    DELTA,
    DELTA_CONFS,
    KAFKA_BROKER,
    KAFKA_CONNECTOR,
    Release,
    Unserved,
    current,
    extension_of,
    parse_coordinates,
    pyspark_jars_dir,
)
from scenarios.base import ResourceUnavailable

__all__ = [
    "DELTA",
    "KAFKA_BROKER",
    "KAFKA_CONNECTOR",
    "PACKAGES",
    "PACKAGES_ENV",
    "SETS",
    "JarSet",
    "JarsUnavailable",
    "artifact_of",
    "connector_jars",
    "problem",
    "require",
    "set_dir",
    "spark_jars_conf",
    "user_packages",
    "with_cached_jars",
]

#: The set of a team's own connectors (``harness setup --packages``).
PACKAGES = "packages"
#: Comma-separated ``group:artifact:version`` of the team's connectors every driver gets (set by
#: ``--packages`` on the command line or the pytest ini option ``harness_packages``).
PACKAGES_ENV = "HARNESS_PACKAGES"
STAMP = ".stamp"
#: In a set's directory instead of a stamp: the registries serve no artifact of it for this release.
UNSERVED = ".unserved"


@dataclass(frozen=True)
class JarSet:
    """A jar set: ``for_spark`` sets go to drivers with ``spark.jars``, with ``confs``."""

    name: str
    for_spark: bool
    confs: Mapping[str, str] = field(default_factory=dict)


SETS: dict[str, JarSet] = {
    KAFKA_CONNECTOR: JarSet(KAFKA_CONNECTOR, for_spark=True),
    DELTA: JarSet(DELTA, for_spark=True, confs=DELTA_CONFS),
    KAFKA_BROKER: JarSet(KAFKA_BROKER, for_spark=False),
    PACKAGES: JarSet(PACKAGES, for_spark=True),
}


class JarsUnavailable(ResourceUnavailable):
    """A jar set is missing from the cache; the message says what to run."""


def user_packages() -> tuple[str, ...]:
    """The team's connectors named by :data:`PACKAGES_ENV` (``ValueError`` for a malformed coordinate)."""
    return parse_coordinates(os.environ.get(PACKAGES_ENV, ""))


def coordinates(name: str, release: Release | None = None) -> tuple[str, ...]:
    """What set ``name`` is resolved from for ``release`` (default: the installed PySpark)."""
    if name == PACKAGES:
        return user_packages()
    if name not in SETS:
        raise ValueError(f"unknown jar set {name!r}; known: {', '.join(sorted(SETS))}")
    return (release or current()).coordinates(name)


def set_dir(name: str, release: Release | None = None, *, root: Path | None = None) -> Path:
    """Where set ``name`` lives for ``release``; the packages set's name carries a digest of its coordinates."""
    release = release or current()
    base = (root or cache_dir() / "jars") / release.spark
    if name == PACKAGES:
        digest = hashlib.sha256(",".join(sorted(coordinates(name))).encode()).hexdigest()[:12]
        return base / f"{PACKAGES}-{digest}"
    return base / name


def read_stamp(directory: Path) -> dict[str, Any] | None:
    """The stamp of a set directory, or ``None`` when absent or unreadable."""
    try:
        stamp = json.loads((directory / STAMP).read_text())
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def write_stamp(
    directory: Path, coords: tuple[str, ...], jars: list[str], seconds: float, resolved: tuple[str, ...] = ()
) -> None:
    """Record that ``directory`` holds ``jars``, asked for as ``coords`` and resolved from ``resolved`` (another
    patch release of the same line when the asked one is not served), or from ``coords``."""
    stamp: dict[str, Any] = {"coordinates": list(coords), "jars": jars, "seconds": round(seconds, 1)}
    if resolved and resolved != coords:
        stamp["resolved"] = list(resolved)
    (directory / STAMP).write_text(json.dumps(stamp, indent=1))


def write_unserved(directory: Path, coords: tuple[str, ...], reason: str) -> None:
    """Record that no registry serves ``coords`` (set-up tries again next time: it may be published since)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / UNSERVED).write_text(json.dumps({"coordinates": list(coords), "reason": reason}))


def unserved_reason(directory: Path, coords: tuple[str, ...]) -> str | None:
    """Why ``coords`` could not be had, when set-up recorded that no registry serves them."""
    try:
        found = json.loads((directory / UNSERVED).read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(found, dict) and tuple(found.get("coordinates", ())) == coords
    return str(found.get("reason", "")) if ok else None


def is_complete(directory: Path, coords: tuple[str, ...]) -> bool:
    """Whether ``directory`` holds every jar its stamp lists, resolved from exactly ``coords``."""
    stamp = read_stamp(directory)
    if stamp is None or tuple(stamp.get("coordinates", ())) != coords:
        return False
    return all((directory / j).is_file() for j in stamp.get("jars", ()))


def python_api_problem(name: str) -> str | None:
    """Why a pipeline needing jar set ``name`` lacks its Python side, in one line (Delta: ``DeltaTable`` and
    ``MERGE`` come from the delta-spark package, the harness's ``delta`` extra); ``None`` when it has it. Not
    part of :func:`problem`: the jars are wired into sessions whether or not the Python package is there."""
    if name == DELTA and importlib.util.find_spec("delta") is None:
        return (
            f"Delta's Python API (the delta-spark package) is not installed beside PySpark {current().spark}: "
            "pip install 'spark-exactly-once-harness[delta]'"
        )
    return None


def unserved_problem(name: str, *, root: Path | None = None) -> str | None:
    """Why set ``name`` cannot be had at all for the installed release (no build of it, or the registries serve
    none: set-up recorded it), in one line; ``None`` when it can (whether it is cached or not)."""
    release = current()
    try:
        coords = coordinates(name, release)
    except Unserved as exc:
        return f"jar set {name!r} cannot be had for PySpark {release.spark}: {exc}"
    directory = set_dir(name, release, root=root)
    if not coords or is_complete(directory, coords):
        return None
    if (why := unserved_reason(directory, coords)) is not None:
        return f"jar set {name!r} cannot be had for PySpark {release.spark}: {why}"
    return None


def problem(name: str, *, root: Path | None = None) -> str | None:
    """Why set ``name`` cannot be used here (one line naming the release and what to run), or ``None``."""
    if (unserved := unserved_problem(name, root=root)) is not None:
        return unserved
    release = current()
    coords = coordinates(name, release)
    if not coords:
        return None
    directory = set_dir(name, release, root=root)
    if is_complete(directory, coords):
        return None
    extra = ("--packages", ",".join(coords)) if name == PACKAGES else ()
    what = f"packages {', '.join(coords)}" if name == PACKAGES else f"jar set {name!r} ({', '.join(coords)})"
    return f"{what} for PySpark {release.spark}, not in the cache {directory}; run `{setup_command(*extra)}`"


# A version starts with digits and a dot ("4.2.0", "1.5.6-10") or is all digits ("20231013"); artifact ids
# may hold "-<digit>" themselves ("spark-sql-kafka-0-10_2.13"), so the version is the leftmost such tail.
_VERSION = re.compile(r"\d+\.\d+.*|\d+")


def artifact_of(file_name: str) -> tuple[str, str] | None:
    """``(artifactId, version)`` of a jar file name ``<artifactId>-<version>.jar``; ``None`` if it is not one."""
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


@functools.cache
def _shipped(directory: Path) -> frozenset[str]:
    return frozenset(_artifact_id(p) for p in directory.glob("*.jar"))


def shipped_artifacts() -> frozenset[str]:
    """Artifact ids of the jars the Spark install ships (what a ``for_spark`` set leaves out)."""
    return _shipped(pyspark_jars_dir())


def connector_jars(name: str, *, root: Path | None = None) -> list[Path]:
    """The jars of set ``name`` a process needs, sorted: for a ``for_spark`` set only those whose artifact the
    Spark install does not ship. Empty when the set is missing (:func:`require` says so)."""
    directory = set_dir(name, root=root)
    jars = sorted(directory.glob("*.jar")) if directory.is_dir() else []
    if not SETS[name].for_spark:
        return jars
    shipped = shipped_artifacts()
    return [j for j in jars if _artifact_id(j) not in shipped]


def require(name: str, *, root: Path | None = None) -> list[Path]:
    """:func:`connector_jars` of set ``name``; :class:`JarsUnavailable` (saying what to run) when missing."""
    reason = problem(name, root=root)
    if reason:
        raise JarsUnavailable(reason)
    return connector_jars(name, root=root)


def _package_confs() -> dict[str, str]:
    extensions = [e for e in (extension_of(c) for c in user_packages()) if e]
    return {"spark.sql.extensions": ",".join(dict.fromkeys(extensions))} if extensions else {}


def spark_jars_conf(*, root: Path | None = None) -> dict[str, str]:
    """``spark.jars`` of every usable ``for_spark`` set (the Kafka connector, Delta, the team's packages) plus
    their session confs (Delta's extension and catalog, a package's extension); ``{}`` when there is none. A
    built-in set that is missing is left out (:func:`require` names it where a scenario needs it); packages
    named by :data:`PACKAGES_ENV` but not in the cache raise :class:`JarsUnavailable`: a run without the
    team's own connector would test something else."""
    if user_packages() and (reason := problem(PACKAGES, root=root)):
        raise JarsUnavailable(reason)
    usable = [SETS[n] for n in (*BUILT_IN, PACKAGES) if SETS[n].for_spark and problem(n, root=root) is None]
    out: dict[str, str] = {}
    for jar_set in usable:
        confs = _package_confs() if jar_set.name == PACKAGES else jar_set.confs
        for key, value in confs.items():
            out[key] = ",".join(filter(None, [out.get(key, ""), value])) if key in _LIST_CONFS else value
    jars = [str(j) for s in usable for j in connector_jars(s.name, root=root)]
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
