"""The README's Kafka example: a pipeline written as in production, under a chaos campaign.

The pipeline reads Spark's Kafka columns (``key, value, topic, partition, offset, ...``), parses the JSON
value, keeps a running total per key and rewrites a parquet table with the whole result in every batch
(complete mode, ``foreachBatch``). The harness fills the topic on a real broker (one for the campaign), the
chaos campaign draws SIGKILLs at the checkpoint's commit points and timed kills, and the oracle is the same
transform over the topic's records read back from the broker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from pyspark.sql import functions as F

from scenarios import Scenario
from scenarios.kafka import KafkaTopic

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

    from scenarios import SinkContext


def transform(kafka: DataFrame) -> DataFrame:  # key, value, topic, partition, offset, timestamp
    events = kafka.select(F.from_json(F.col("value").cast("string"), "key INT, value BIGINT").alias("e"))
    return events.select("e.*").groupBy("key").agg(F.count(F.lit(1)).alias("events"), F.sum("value").alias("total"))


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    def rewrite(batch: DataFrame, batch_id: int) -> None:  # complete mode: the whole table every batch
        batch.write.mode("overwrite").parquet(ctx.output)

    return writer.outputMode("complete").foreachBatch(rewrite)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.read.schema(schema).parquet(ctx.output)


TOTALS = Scenario(
    name="kafka_totals",
    summary="Kafka JSON -> totals per key",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "after_commit_logged"),
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_output,
    source=KafkaTopic(raw=True),
    identity=("key",),
    stateful=True,
    confs={"spark.sql.streaming.noDataMicroBatches.enabled": "false"},
)


# CI time (~31 s): the default suite's Kafka campaigns are the user project's (test_user_project.py) and the
# kill plans of test_kafka_scenarios.py; this one, the README's example, runs in the heavy tier.
@pytest.mark.heavy
@pytest.mark.chaos(scenario="tests.integration.test_kafka_pipeline:TOTALS", examples=2, profile="ci", seed=5)
def test_kafka_totals_are_exactly_once(chaos_run: Any) -> None:
    result = chaos_run()
    result.assert_exactly_once()
    assert len(result.examples) == 2 and sum(len(e.faults_fired) for e in result.examples) >= 1
