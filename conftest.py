"""Test-suite configuration.

Unit tests (marker ``unit``) never touch Spark; integration tests (marker
``spark``) use the ``spark`` fixture, which the harness's own pytest plugin
(``harness.pytest_plugin``, installed as a ``pytest11`` entry point) provides:
one session-scoped SparkSession per worker with small, fast settings, created
lazily on first use. Tests in ``tests/unit`` and ``tests/integration`` are
marked automatically.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "unit" in parts:
            item.add_marker(pytest.mark.unit)
        elif "integration" in parts:
            item.add_marker(pytest.mark.spark)
