"""Import pyspark and py4j in Spark's Python processes from the installed packages, not from Spark's zips.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` (and py4j's zip) first on the
``PYTHONPATH`` of every Python process it starts. Modules in a zip are compiled
from source at every import (nothing caches their bytecode), which costs each
freshly started process ~0.45 s here; the streaming source runner of a Python
data source is such a process, started at every query start.

:func:`harness.spark.session.spark_env` puts this directory on ``PYTHONPATH``, so
Python runs this module at start-up. It moves a zip to the end of ``sys.path``
only when another ``sys.path`` entry holds the same package at the same version
(byte-identical ``version.py``), so the code that runs is the same release.
Any other ``sitecustomize`` further along ``sys.path`` still runs.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import zipfile

#: Package of each zip Spark ships (``pyspark.zip``, ``py4j-<version>-src.zip``).
_PACKAGES = ("pyspark", "py4j")
_HERE = os.path.dirname(os.path.realpath(__file__))


def _zip_package(entry: str) -> str | None:
    name = os.path.basename(entry)
    if not name.endswith(".zip"):
        return None
    return next((p for p in _PACKAGES if name.startswith(p)), None)


def _same_release(archive: str, package: str, directory: str) -> bool:
    try:
        with open(os.path.join(directory, package, "version.py"), "rb") as f:
            installed = f.read()
        with zipfile.ZipFile(archive) as z:
            return z.read(f"{package}/version.py") == installed
    except (OSError, KeyError, zipfile.BadZipFile):
        return False


def prefer_installed(path: list[str]) -> list[str]:
    """``path`` with each Spark zip moved behind the other entries when one of them
    holds the same package at the same version; otherwise ``path`` unchanged."""
    moved = []
    for entry in path:
        package = _zip_package(entry)
        if package is None:
            continue
        dirs = [d for d in path if d and _zip_package(d) is None and os.path.isdir(os.path.join(d, package))]
        if any(_same_release(entry, package, d) for d in dirs):
            moved.append(entry)
    return [e for e in path if e not in moved] + moved


def _chain() -> None:
    """Run the next ``sitecustomize`` on ``sys.path``, if any (this one shadows it)."""
    for entry in sys.path:
        candidate = os.path.join(entry or ".", "sitecustomize.py")
        if os.path.realpath(entry or ".") == _HERE or not os.path.isfile(candidate):
            continue
        spec = importlib.util.spec_from_file_location("_next_sitecustomize", candidate)
        if spec is not None and spec.loader is not None:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        return


if __name__ == "sitecustomize":  # run by Python at start-up (tests import it under another name)
    sys.path[:] = prefer_installed(sys.path)
    _chain()
