"""Shared pytest fixtures: one session-scoped SparkSession per worker.

Unit tests (marker ``unit``) never touch Spark; integration tests (marker
``spark``) get the ``spark`` fixture, created lazily on first use with small,
fast settings (local[2], 2 shuffle partitions, UI off) and stopped at the end.
Tests in ``tests/unit`` and ``tests/integration`` are marked automatically.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        if "unit" in parts:
            item.add_marker(pytest.mark.unit)
        elif "integration" in parts:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from harness.session import build_session

    session = build_session("harness-tests")
    yield session
    session.stop()
