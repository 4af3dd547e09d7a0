"""The README example: testing your own pipeline with one pytest function.

The pipeline below is a user's own (not a built-in scenario): a filter and a
projection into the parquet file sink. The ``chaos`` marker names it by import
path, and the ``chaos_run`` fixture runs a Hypothesis chaos campaign on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from pyspark.sql import functions as F

from scenarios import Scenario

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

    from scenarios import SinkContext


def transform(df: DataFrame) -> DataFrame:
    return df.where(F.col("key") % 3 != 0).select("partition", "offset", "seq", "key", (F.col("value") + 1).alias("v"))


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.format("parquet").option("path", ctx.output)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.read.schema(schema).parquet(ctx.output)


MY_PIPELINE = Scenario(
    name="my_pipeline",
    summary="filter + projection -> parquet",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "sink.write.mid", "after_commit_logged"),
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_output,
)


@pytest.mark.heavy  # CI time (13 s): test_user_project runs this example, as the README has it, from a wheel
@pytest.mark.chaos(scenario="tests.integration.test_user_pipeline:MY_PIPELINE", examples=2, profile="ci", seed=3)
def test_my_pipeline_is_exactly_once(chaos_run: Any) -> None:
    result = chaos_run()
    result.assert_exactly_once()
    assert len(result.examples) == 2


@pytest.mark.chaos(scenario="file_sink_stateless", examples=1, profile="ci", seed=10)
def test_campaigns_of_a_session_start_on_its_live_driver(chaos_run: Any) -> None:
    # A ci campaign's first example raises once (a soft fault, golden schedules): on the session's driver pool,
    # already live after the first call, the second campaign starts no driver at all.
    first = chaos_run()
    first.assert_exactly_once()
    again = chaos_run()
    again.assert_exactly_once()
    assert len(again.examples) == 1 and again.examples[0].faults_fired, again.examples  # the query restarted
    assert again.driver_starts == 0, again.driver_starts


def test_replayable_source_fixture(replayable_source: Any) -> None:
    replayable_source.add({0: 5, 1: 3})
    rows = sorted(tuple(r) for r in replayable_source.batch().select("partition", "offset").collect())
    assert rows == [(0, o) for o in range(5)] + [(1, o) for o in range(3)]
    assert [(r[0], r[1]) for r in replayable_source.rows()] == rows
