"""A JVM class-data archive (AppCDS) of the Spark driver, so drivers start faster.

Measured here (2 cores, idle): a SparkSession took 4.8 s to start and 6.0 s
more to warm its Python workers; with the archive 2.6 s and 4.4 s. A chaos
campaign pays a JVM start for every hard kill, so this matters more than any
other start-up setting.

The archive is built once per Spark install, into the harness's cache (:mod:`harness.spark.cache`), by
``harness setup`` (which ``bin/test`` and ``bin/demo`` run; ``python -m harness cds`` alone:
:mod:`harness.spark.cds_build`): a driver started with
``-XX:ArchiveClassesAtExit`` runs the standby warm-up and exits cleanly, and
the JVM writes the classes it loaded (~190 MB). Its name is a digest of the
``java`` binary, the pyspark version, the jar list and the driver's JVM
options, so a different JDK or pyspark builds a new one. :func:`java_options`
adds ``-XX:SharedArchiveFile`` to the driver's JVM options when the archive
exists; the JVM ignores a stale archive it cannot use (``-Xshare:auto``): that
costs speed, never correctness. A *damaged* archive would crash the JVM, so a new
one is CRC-checked and used by a real session before it is renamed into place.
``HARNESS_CDS=0`` turns it off.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from harness.spark.cache import cache_dir

CDS_ENV = "HARNESS_CDS"
_OWN_FLAGS = ("SharedArchiveFile", "ArchiveClassesAtExit", "Xshare")


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.exists():
        which = shutil.which("java")
        found = Path(which) if which else None
    return found.resolve() if found is not None else None


def archive_path(base_options: str) -> Path | None:
    """Where the archive for this JDK, pyspark and JVM options lives (``None`` without ``java``)."""
    import pyspark

    java = _java()
    if java is None:
        return None
    spark_home = os.environ.get("SPARK_HOME")
    jars = Path(spark_home) / "jars" if spark_home else Path(pyspark.__file__).parent / "jars"
    digest = hashlib.sha256()
    st = java.stat()
    options = " ".join(base_options.split())
    # The jars' directory is part of the key: an archive records the class path it was dumped with, so a
    # second environment with the same PySpark elsewhere gets an archive of its own in the shared cache.
    digest.update(f"{java}|{st.st_size}|{st.st_mtime_ns}|{pyspark.__version__}|{options}|{jars}".encode())
    for jar in sorted(jars.glob("*.jar")):
        # The JVM refuses an archive whose class path jars changed since the dump (size or modification time):
        # a venv made again at the same path gets a new archive, not a stale one it silently ignores.
        st_jar = jar.stat()
        digest.update(f"|{jar.name}:{st_jar.st_size}:{st_jar.st_mtime_ns}".encode())
    return cache_dir() / "cds" / f"spark-driver-{digest.hexdigest()[:16]}.jsa"


def java_options(base_options: str) -> str:
    """``base_options`` plus ``-XX:SharedArchiveFile=...`` when the archive exists, CDS is
    not turned off and the options do not already choose a CDS setting."""
    if os.environ.get(CDS_ENV) == "0" or any(flag in base_options for flag in _OWN_FLAGS):
        return base_options
    path = archive_path(base_options)
    if path is None or not path.is_file():
        return base_options
    return f"{base_options} -XX:SharedArchiveFile={path}".strip()
