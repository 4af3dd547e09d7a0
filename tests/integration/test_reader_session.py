"""The verdict reads a sink's output in a clone of the writer's session with catalogs of its own (reader_session).

The behaviour it guards, a connector catalog's cached table snapshot hiding rows written after it was loaded,
needs Iceberg (PySpark 4.1: the heavy ``test_iceberg_project``); here, what the clone keeps: what a user's
``read_output`` may rely on (confs, temporary views, functions).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.spark.session import reader_session

pytestmark = pytest.mark.spark

CATALOG_KEY = "spark.sql.catalog.lake_reader_test.type"  # a key no Spark conf registers, as a catalog's are


def test_the_reader_is_another_session_with_the_writers_confs_and_views(spark: Any) -> None:
    before = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "7")
    spark.conf.set(CATALOG_KEY, "hadoop")
    spark.range(3).createOrReplaceTempView("writer_only_view")
    try:
        reader = reader_session(spark)
        assert reader is not spark
        assert reader.conf.get("spark.sql.shuffle.partitions") == "7"
        assert reader.conf.get(CATALOG_KEY) == "hadoop"
        assert reader.table("writer_only_view").count() == 3  # what read_output may have registered
        reader.range(5).createOrReplaceTempView("reader_only_view")  # a copy: nothing flows back
        assert "reader_only_view" not in {t.name for t in spark.catalog.listTables()}
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
        spark.conf.unset(CATALOG_KEY)
        spark.catalog.dropTempView("writer_only_view")
        spark.catalog.dropTempView("reader_only_view")
