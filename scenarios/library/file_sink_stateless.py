"""Stateless map/filter into the parquet file sink.

Purpose: the baseline exactly-once pipeline. Faults: SIGKILL of the driver's
process groups while the next batch is planned (``source.latest_offset``),
after ``offsets/N`` is logged, in a write task of batch N (``source.read``,
``sink.write.start|mid|end``, fired from the source's read() because the file
sink writes as rows stream through the task), and after ``commits/N`` is
logged. Guarantee checked: exactly-once (the file sink's ``_spark_metadata``
log hides files of uncommitted attempts). Pass condition: the rows readable
through the sink equal, as a multiset, the same transform over exactly the
input the harness added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.base import Scenario
from scenarios.presets import FILE_SINK, READ_POINTS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def transform(df: DataFrame) -> DataFrame:
    return (
        df.where(F.col("value") % 7 != 0)
        .withColumn("value_x2", F.col("value") * 2)
        .withColumn("bucket", F.col("key") % 4)
    )


SCENARIO = Scenario(
    name="file_sink_stateless",
    summary="stateless map/filter -> parquet file sink (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=READ_POINTS,
    transform=transform,
    **FILE_SINK,
)
