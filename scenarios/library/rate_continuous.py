"""Spark's ``rate`` source -> map -> Spark's Kafka sink, in continuous processing (``continuous:1 second``).

Purpose: continuous processing as Spark documents it: the ``rate`` source (data that arrives by itself, by the
clock: :mod:`scenarios.rate`), a map-like query, at-least-once. Rows flow in every epoch, so a kill between a
write and its epoch's commit shows what a restart does: the epoch is redone from the last committed offsets.
:data:`FOREACH` writes the same rows through a Python ``foreach`` (appending); PySpark's ``foreach`` fails under
continuous processing at the second epoch, which its runs report.
Faults: SIGKILL of the driver's process groups when ``offsets/N`` and ``commits/N`` appear (the checkpoint
watcher; N is the epoch), and timed kills (``--kill batch.time:N:MS``: MS ms after epoch N's offsets).
Guarantee checked: at-least-once (Spark's documented guarantee for continuous processing).
Pass condition: every value up to the newest committed epoch's offsets is in the output at least once; rows past
it belong to an epoch that never committed and are not judged (the next run redoes it). Duplicates and losses are
named by value and epoch.
Requirements: the set-up's jar cache; the broker is started by the run (or shared); the output topic is the
run's topic.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.base import Scenario, SinkContext
from scenarios.foreach_sink import foreach_sink, read_foreach_output
from scenarios.kafka.resource import kafka_resource
from scenarios.library.kafka_sink import OUTPUT_PARTITIONS, read_topic
from scenarios.rate import RateSource

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

WATCHED_POINTS = ("after_offsets_logged", "after_commit_logged")
NOTE = "the rate source's offsets are continuous processing's here (a micro-batch rate query is another source)"


def transform(df: DataFrame) -> DataFrame:
    """A map: each value and its double (the clock's timestamp is left out: it is not reproducible)."""
    return df.select(F.col("value"), (F.col("value") * 2).alias("value_x2"))


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Spark's Kafka sink into the run's topic (created here), rows as JSON values."""
    from scenarios.kafka import client
    from scenarios.kafka.resource import BOOTSTRAP, TOPIC

    bootstrap, topic = ctx.resources[BOOTSTRAP], ctx.resources[TOPIC]
    if not client.topic_exists(bootstrap, topic):
        client.create_topic(bootstrap, topic, OUTPUT_PARTITIONS)
    return writer.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)


def as_json(df: DataFrame) -> DataFrame:
    return df.select(F.to_json(F.struct(*df.columns)).alias("value"))


def _sink_transform(df: DataFrame) -> DataFrame:
    return as_json(transform(df))


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """The output topic's rows up to the newest committed epoch (:meth:`RateSource.committed_only`)."""
    from scenarios.kafka.resource import BOOTSTRAP, TOPIC

    rows = read_topic(spark, ctx.resources[BOOTSTRAP], ctx.resources[TOPIC], schema)
    return RateSource.committed_only(rows, ctx.checkpoint, PARTITIONS)


def read_foreach(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return RateSource.committed_only(read_foreach_output(spark, ctx, schema), ctx.checkpoint, PARTITIONS)


def oracle(batch: DataFrame, ctx: object) -> DataFrame:
    return transform(batch)


PARTITIONS = 2

SCENARIO = Scenario(
    name="rate_continuous",
    summary="rate source -> map -> Kafka sink, continuous processing (expected: at-least-once)",
    guarantee="at-least-once",
    kill_points=WATCHED_POINTS,
    transform=_sink_transform,
    oracle=oracle,
    attach_sink=attach_sink,
    read_output=read_output,
    identity=("value",),
    partitions=PARTITIONS,
    rows_per_round=(20, 60),
    source=RateSource(),
    resource=kafka_resource,
    triggers=("continuous",),
    default_trigger="continuous:1 second",
    trigger_note=NOTE,
)

FOREACH = dataclasses.replace(
    SCENARIO,
    name="rate_continuous_foreach",
    summary="rate source -> map -> Python foreach appending rows, continuous processing (expected: at-least-once)",
    transform=transform,
    attach_sink=foreach_sink("append", ("value",)),
    read_output=read_foreach,
    kill_points=("after_offsets_logged", "sink.write.start", "sink.write.end", "after_commit_logged"),
    source_write_points=False,
    resource=None,
)
