"""``harness setup``'s refusals that need no JVM: one line, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness.spark.cache import setup_command


def _setup(*args: str, cache: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    env["HARNESS_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-m", "harness", "setup", *args], env=env, capture_output=True, text=True)
    return done.returncode, done.stderr


def test_offline_with_an_empty_cache_names_what_it_lacks(tmp_path: Path) -> None:
    rc, err = _setup("--offline", cache=tmp_path / "empty")
    assert rc == 2
    lines = [line for line in err.splitlines() if line.startswith("harness:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "offline, and the cache" in lines[0]
    assert "kafka-connector (org.apache.spark:spark-sql-kafka-0-10_" in lines[0]
    # `harness setup` where this environment's console script is on PATH (bin/test), else `python -m harness`.
    assert f"run `{setup_command()}` once with network access" in lines[0]


def test_a_malformed_package_is_named(tmp_path: Path) -> None:
    rc, err = _setup("--packages", "org.apache.iceberg:iceberg-spark-runtime", cache=tmp_path / "c")
    assert rc == 2 and err.strip().splitlines() == [
        "harness: setup --packages: 'org.apache.iceberg:iceberg-spark-runtime' is not a Maven coordinate "
        "GROUP:ARTIFACT:VERSION"
    ]
