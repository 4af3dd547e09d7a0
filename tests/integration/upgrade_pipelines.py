"""Production-style pipelines for ``upgrade-check`` (``path.py:NAME`` naming a function ``(spark) -> streaming
DataFrame``): Spark's ``rate`` source counted per ``value % 5`` bucket, and three next versions of it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def _rate(spark: SparkSession) -> DataFrame:
    return spark.readStream.format("rate").option("rowsPerSecond", 50).load()


def current(spark: SparkSession) -> DataFrame:
    """What runs in production: a count and a sum per bucket."""
    return _rate(spark).groupBy((F.col("value") % 5).alias("bucket")).agg(F.count("*").alias("n"), F.sum("value"))


def filtered(spark: SparkSession) -> DataFrame:
    """Next version: a filter before the same aggregation (the guide: allowed)."""
    rate = _rate(spark).where(F.col("value") >= 0)
    return rate.groupBy((F.col("value") % 5).alias("bucket")).agg(F.count("*").alias("n"), F.sum("value"))


def max_for_sum(spark: SparkSession) -> DataFrame:
    """Next version: ``max`` for ``sum`` (same state types; the guide: not allowed)."""
    return _rate(spark).groupBy((F.col("value") % 5).alias("bucket")).agg(F.count("*").alias("n"), F.max("value"))


def more_keys(spark: SparkSession) -> DataFrame:
    """Next version: one more grouping key (Spark refuses it)."""
    keys = [(F.col("value") % 5).alias("bucket"), (F.col("value") % 2).alias("parity")]
    return _rate(spark).groupBy(*keys).agg(F.count("*").alias("n"), F.sum("value"))


def broken(spark: SparkSession) -> DataFrame:
    """A next version whose own code fails before it returns a query."""
    raise ValueError("orders topic not configured")
