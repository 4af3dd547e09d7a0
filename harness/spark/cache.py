"""Where the harness keeps what set-up fetches and builds: one cache per user, shared by every project.

- ``$HARNESS_CACHE_DIR`` when set (a pytest ``harness_cache_dir`` ini option sets it for a session);
- else the platform's cache directory: ``$XDG_CACHE_HOME/spark-exactly-once-harness`` (``~/.cache/...``
  without it), ``~/Library/Caches/spark-exactly-once-harness`` on macOS, ``%LOCALAPPDATA%\\...`` on Windows.

Inside: ``ivy/`` (the resolver's download cache), ``jars/<pyspark version>/<set>/`` (the jars each Spark
release gets, :mod:`harness.spark.jars`), ``cds/`` (drivers' class-data archives, :mod:`harness.spark.cds`).
Nothing in it belongs to a checkout: deleting it costs one ``harness setup``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

CACHE_ENV = "HARNESS_CACHE_DIR"
#: ``1`` (also ``true``/``yes``): never touch the network; a missing jar is named, not fetched.
OFFLINE_ENV = "HARNESS_OFFLINE"
_NAME = "spark-exactly-once-harness"


def cache_dir() -> Path:
    """The cache root (read anew on every call: a test or the pytest plugin may set the variable)."""
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given).expanduser()
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / _NAME
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local") / _NAME
    return Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache") / _NAME


def offline() -> bool:
    """Whether :data:`OFFLINE_ENV` asks for no network access."""
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def setup_command(*args: str) -> str:
    """The command that fills the cache, as a user would type it here: ``harness setup`` when that console
    script belongs to this interpreter's environment, else ``<this python> -m harness setup``."""
    import shutil

    script = shutil.which("harness")
    # Not resolved: a venv's python is a symlink to the base interpreter, which lacks the project.
    ours = script is not None and Path(script).absolute().parent == Path(sys.executable).absolute().parent
    prefix = "harness" if ours else f"{sys.executable} -m harness"
    return " ".join([prefix, "setup", *args])
