"""Upgrade: a stateless map/filter into the parquet file sink, redeployed with a changed filter.

Purpose: the change the programming guide allows ("Changes in projection / filter / map-like operations: ...
filters ... are allowed"): version 1 keeps rows whose ``value % 7 != 0``, version 2 (:data:`V2`, the
``upgrade_to``) those whose ``value % 5 != 0``, with the same output columns, over the same checkpoint and sink.
Faults: those of ``file_sink_stateless``, before and after the deploy; the deploy itself after a graceful stop
or after a SIGKILL. Guarantee checked: exactly-once across the deploy: every batch committed before the deploy
shows version 1's rows, every later batch (a replay of a batch version 1 planned included) version 2's, each
exactly once. Pass condition: the sink's rows equal, as a multiset, version 1's transform over the input of the
batches it committed plus version 2's over the rest.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.base import Scenario
from scenarios.presets import FILE_SINK, READ_POINTS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def _projected(df: DataFrame) -> DataFrame:
    return df.withColumn("value_x2", F.col("value") * 2).withColumn("bucket", F.col("key") % 4)


def transform(df: DataFrame) -> DataFrame:
    return _projected(df.where(F.col("value") % 7 != 0))


def transform_v2(df: DataFrame) -> DataFrame:
    return _projected(df.where(F.col("value") % 5 != 0))


SCENARIO = Scenario(
    name="upgrade_filter",
    summary="stateless map/filter -> parquet file sink, redeployed with a changed filter (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=READ_POINTS,
    transform=transform,
    upgrade_to="scenarios.library.upgrade_filter:V2",
    **FILE_SINK,
)
#: Version 2: the same pipeline with the filter changed.
V2 = replace(SCENARIO, name="upgrade_filter_v2", transform=transform_v2, upgrade_to=None)
