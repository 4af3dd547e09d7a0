"""Spark's Kafka source -> stateless map/filter -> Spark's Kafka sink, under every trigger Spark offers.

Purpose: the one pipeline every trigger runs: micro-batch rounds, scheduled ``availableNow``/``once`` jobs, a
processing-time clock, continuous processing (``--trigger 'continuous:1 second'``) and Real-time Mode
(``--trigger 'real-time:1 second'``; this pipeline lowers ``spark.sql.streaming.realTimeMode.minBatchDuration``
to 1 s so a run stays short). Continuous processing and Real-time Mode read only Kafka (and ``rate``) and write
only to Kafka, ``foreach``, console and memory; this is the pipeline a team runs there.
Faults: SIGKILL of the driver's process groups when ``offsets/N`` and ``commits/N`` appear (the checkpoint
watcher; in an epoch run N is the epoch) and timed kills (``--kill batch.time:N:MS``).
Guarantee checked: at-least-once. Spark's Kafka sink is not transactional: an epoch or batch re-run after a
restart writes its records again (the Programming Guide says so for micro-batch and continuous processing
alike; Real-time Mode is documented as exactly-once *processing* with no exactly-once sink).
Pass condition: every row of the map/filter over the input topic's records the committed epochs cover is in
the output topic at least once; duplicates are named by provenance (partition, offset) and epoch.
Requirements: the set-up's jar cache; the broker is started by the run (or shared). The output topic is the
run's topic with ``-out``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scenarios.base import MICRO_BATCH_TRIGGERS, Scenario, SinkContext
from scenarios.kafka.resource import BOOTSTRAP, TOPIC
from scenarios.kafka.source import KafkaTopic
from scenarios.library.kafka_sink import OUTPUT_PARTITIONS, oracle, read_topic, transform

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

#: Reached by the checkpoint watcher in every trigger (SIGKILL only).
WATCHED_POINTS = ("after_offsets_logged", "after_commit_logged")
#: Every trigger: the epoch ones need a Kafka (or rate) source and a Kafka, foreach, console or memory sink.
ALL_TRIGGERS = (*MICRO_BATCH_TRIGGERS, "continuous", "real-time")
#: Real-time batches of 1 s (Spark's minimum is 5 s by default), so a round of an epoch run takes seconds.
REAL_TIME_CONFS = {"spark.sql.streaming.realTimeMode.minBatchDuration": "1000"}


def output_topic(ctx: SinkContext) -> tuple[str, str]:
    """The run's broker and output topic (the run's topic, which the source reads, with ``-out``)."""
    if BOOTSTRAP not in ctx.resources or TOPIC not in ctx.resources:
        raise RuntimeError("no Kafka broker in the run's resources; run the pipeline through the harness")
    return ctx.resources[BOOTSTRAP], ctx.resources[TOPIC] + "-out"


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Spark's Kafka sink into the output topic (created here), in update mode (what Real-time Mode requires;
    a stateless query writes the same rows in any mode)."""
    from scenarios.kafka import client

    bootstrap, topic = output_topic(ctx)
    if not client.topic_exists(bootstrap, topic):
        client.create_topic(bootstrap, topic, OUTPUT_PARTITIONS)
    return (
        writer.outputMode("update").format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)
    )


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Every record of the output topic (``read_committed``), parsed into ``schema``."""
    return read_topic(spark, *output_topic(ctx), schema)


SCENARIO = Scenario(
    name="kafka_to_kafka",
    summary="Kafka source -> map/filter -> Kafka sink, any trigger incl. continuous and real-time "
    "(expected: at-least-once)",
    guarantee="at-least-once",
    kill_points=WATCHED_POINTS,
    transform=transform,
    oracle=oracle,
    attach_sink=attach_sink,
    read_output=read_output,
    source=KafkaTopic(),
    confs=REAL_TIME_CONFS,
    triggers=ALL_TRIGGERS,
)
