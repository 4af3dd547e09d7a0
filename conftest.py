"""Test-suite configuration.

Unit tests (marker ``unit``) never touch Spark; integration tests (marker
``spark``) use the ``spark`` fixture, which the harness's own pytest plugin
(``harness.pytest_plugin``, installed as a ``pytest11`` entry point) provides:
one session-scoped SparkSession per worker with small, fast settings, created
lazily on first use. Tests in ``tests/unit`` and ``tests/integration`` are
marked automatically. Tests marked ``heavy`` (long tiers) are skipped unless
``HARNESS_HEAVY=1``; ``bin/test-heavy`` runs them. Under ``CI=true`` a test
skipped because a component is missing fails instead (:mod:`tests.ci_skips`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

#: Under CI=true a skip for a missing component fails the run (tests/ci_skips.py).
pytest_plugins = ["tests.ci_skips"]


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".")[:2])


def _pyspark_release() -> tuple[int, ...]:
    import pyspark

    return _release(pyspark.__version__)


#: Set to 1 to run the tests marked ``heavy`` (``bin/test-heavy`` does); otherwise they are skipped, with the reason.
HEAVY_ENV = "HARNESS_HEAVY"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    heavy = os.environ.get(HEAVY_ENV) == "1"
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "unit" in parts:
            item.add_marker(pytest.mark.unit)
        elif "integration" in parts:
            item.add_marker(pytest.mark.spark)
        needs = item.get_closest_marker("pyspark_min")
        version = (needs.args[0] if needs.args else needs.kwargs["version"]) if needs else ""
        if needs and _pyspark_release() < _release(version):
            # A skip by design: the subject is written against a newer PySpark's API (the support matrix says so).
            why = needs.kwargs.get("reason", "")
            item.add_marker(pytest.mark.skip(reason=f"needs PySpark {version}: {why}".rstrip(": ")))
        if item.get_closest_marker("heavy") and not heavy:
            item.add_marker(pytest.mark.skip(reason=f"heavy tier, opt-in: bin/test-heavy ({HEAVY_ENV}=1)"))
