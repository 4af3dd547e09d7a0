"""Resolving Maven coordinates without Maven: Apache Ivy, the resolver Spark itself uses for
``spark.jars.packages``, run from the ``ivy`` jar PySpark ships (``pyspark/jars/ivy-*.jar``).

:func:`resolve` writes an Ivy module naming the coordinates (runtime scope, transitively, minus the modules
the caller excludes) and a settings file naming the registries, runs ``org.apache.ivy.Main`` in a JVM of its
own, and retrieves the jars into a directory as ``<artifactId>-<version>[-<classifier>].jar``. Downloads
stay in Ivy's cache under the harness's cache (:mod:`harness.spark.cache`), so a second resolution of the same
coordinates touches only the registry's metadata. Every failure is a :class:`ResolveError` of one line naming
the coordinate and the registry; Ivy's own output goes to a log file the error names.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from harness.errors import SetupError
from harness.spark.releases import pyspark_jars_dir

#: Maven Central, Spark's default registry.
CENTRAL = "https://repo1.maven.org/maven2/"
#: Comma-separated registry URLs tried in order instead of Maven Central (a company mirror, say).
REPOSITORIES_ENV = "HARNESS_MAVEN_REPOSITORIES"
TIMEOUT_S = 900.0

_NOT_FOUND = re.compile(r"::\s+([^\s#]+)#([^\s;]+);(\S+?):\s+not found", re.MULTILINE)
_REFUSED = re.compile(r"(SERVER ERROR|CLIENT ERROR): (?!Not Found)(.*?) url=(\S+)")
_ACCESS = re.compile(r"Server access error at url (\S+) \(([^)]*)\)")
_DOWNLOAD = re.compile(r"^\s*downloading (\S+) \.\.\.", re.MULTILINE)


class ResolveError(SetupError, RuntimeError):
    """A coordinate could not be resolved: one line naming it, the registry and the log. ``not_served``: the
    registries answered that they hold no such artifact (not a refusal, nor a network failure)."""

    def __init__(self, message: str, *, not_served: bool = False) -> None:
        super().__init__(message)
        self.not_served = not_served


@dataclass(frozen=True)
class Resolution:
    """What one resolution retrieved: the jar files, how many files came over the network, and its time."""

    jars: tuple[Path, ...]
    downloads: int
    seconds: float


def repositories(given: Sequence[str] = ()) -> tuple[str, ...]:
    """The registries to ask, in order: ``given``, else :data:`REPOSITORIES_ENV`, else Maven Central."""
    urls = list(given) or [u for u in os.environ.get(REPOSITORIES_ENV, "").split(",") if u.strip()]
    return tuple(u.strip().rstrip("/") + "/" for u in urls) or (CENTRAL,)


def java_binary() -> Path | None:
    """``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``; ``None`` without either."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return Path(home) / "bin" / "java"
    found = shutil.which("java")
    return Path(found) if found else None


def ivy_jar() -> Path:
    """The Ivy jar of the installed Spark; :class:`ResolveError` when it ships none."""
    found = sorted(pyspark_jars_dir().glob("ivy-*.jar"))
    if not found:
        raise ResolveError(f"no ivy-*.jar in {pyspark_jars_dir()}: this Spark cannot resolve jars")
    return found[-1]


def _settings(cache: Path, urls: Sequence[str]) -> str:
    resolvers = "\n".join(
        f'      <ibiblio name="repo{i}" m2compatible="true" usepoms="true" root={quoteattr(u)}/>'
        for i, u in enumerate(urls)
    )
    return f"""<ivysettings>
  <settings defaultResolver="registries"/>
  <caches defaultCacheDir={quoteattr(str(cache))} useOrigin="false"/>
  <resolvers>
    <chain name="registries" returnFirst="true">
{resolvers}
    </chain>
  </resolvers>
</ivysettings>
"""


def _module(coordinates: Sequence[str], exclude: Iterable[str]) -> str:
    deps = []
    for coordinate in coordinates:
        group, artifact, version = coordinate.split(":")
        deps.append(
            f"    <dependency org={quoteattr(group)} name={quoteattr(artifact)} rev={quoteattr(version)} "
            'conf="default->default(runtime)"/>'
        )
    # The jars the Spark install ships already: leaving them out keeps a second, other copy of their classes
    # off the class path and saves the download (Hadoop's client alone is 50 MB).
    deps += [f"    <exclude module={quoteattr(m)}/>" for m in sorted(set(exclude))]
    body = "\n".join(deps)
    return f"""<ivy-module version="2.0">
  <info organisation="spark-exactly-once-harness" module="jar-set" revision="0"/>
  <configurations><conf name="default"/></configurations>
  <dependencies>
{body}
  </dependencies>
</ivy-module>
"""


def resolve(
    coordinates: Sequence[str],
    target: Path,
    *,
    cache: Path,
    urls: Sequence[str],
    exclude: Iterable[str] = (),
    log: Path,
) -> Resolution:
    """Resolve ``coordinates`` with their runtime dependencies and put their jars in ``target`` (created; any
    file already there is left). ``log`` receives Ivy's output. :class:`ResolveError` on any failure."""
    java = java_binary()
    if java is None:
        raise ResolveError("'java' not found (set JAVA_HOME or put a JDK 17+ on PATH); it resolves the jars")
    jar = ivy_jar()
    work = target.parent / f".{target.name}.ivy"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "ivysettings.xml").write_text(_settings(cache, urls))
    (work / "ivy.xml").write_text(_module(coordinates, exclude))
    target.mkdir(parents=True, exist_ok=True)
    cmd = [str(java), "-cp", str(jar), "org.apache.ivy.Main", "-settings", str(work / "ivysettings.xml")]
    cmd += ["-ivy", str(work / "ivy.xml"), "-confs", "default", "-types", "jar", "bundle"]
    cmd += ["-retrieve", str(target / "[artifact]-[revision](-[classifier]).[ext]")]
    cmd += ["-verbose"]  # Ivy names a registry's 4xx refusal (403 Forbidden) only at this level
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    try:
        done = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=work
        )
        out, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as exc:  # its output is bytes even with text=True
        partial = b"".join(x if isinstance(x, bytes) else x.encode() for x in (exc.stdout, exc.stderr) if x)
        out, code = f"{partial.decode(errors='replace')}\ntimed out after {TIMEOUT_S:.0f} s", -1
    log.write_text(out)
    shutil.rmtree(work, ignore_errors=True)
    if code != 0 or "UNRESOLVED DEPENDENCIES" in out:
        why, not_served = explain(out, coordinates, urls)
        raise ResolveError(f"{why} (resolver log: {log})", not_served=not_served)
    jars = tuple(sorted(p for p in target.iterdir() if p.suffix == ".jar"))
    return Resolution(jars, len(_DOWNLOAD.findall(out)), time.monotonic() - t0)


def explain(output: str, coordinates: Sequence[str], urls: Sequence[str]) -> tuple[str, bool]:
    """Why Ivy failed, in one line: the registry refusing (HTTP status), a registry out of reach, or the
    coordinate no registry serves (then the flag is true)."""
    where = ", ".join(urls)
    refused = _REFUSED.search(output)
    if refused:
        return f"the registry refused {refused.group(3)}: {refused.group(2)}", False
    access = _ACCESS.search(output)
    if access:
        return (
            f"cannot reach {access.group(1)} ({access.group(2)}); check the network, name a mirror with "
            "--repository, or run offline with a complete cache"
        ), False
    missing = _NOT_FOUND.search(output)
    if missing:
        group, artifact, version = missing.groups()
        asked = f"{group}:{artifact}:{version}"
        via = "" if asked in coordinates else f" (a dependency of {', '.join(coordinates)})"
        return f"{asked}{via} is not served by {where}", True
    tail = [line.strip() for line in output.splitlines() if line.strip()][-1:] or ["no output"]
    return f"resolving {', '.join(coordinates)} failed: {tail[0][:300]}", False
