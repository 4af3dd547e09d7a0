"""The replayable source -> stateless map/filter -> Spark's Kafka sink, read back ``read_committed``.

Purpose: Spark's Kafka sink as teams use it (``writeStream.format("kafka")``, each row's JSON as the record
value, its ``key`` as the record key), against a real KRaft broker (:mod:`scenarios.kafka`). The Programming
Guide documents it as at-least-once: a batch re-run after a restart writes its records again. This pipeline
measures that.
Faults: SIGKILL of the driver's process groups after ``offsets/N`` is logged, in a write task of batch N
(``sink.write.mid|end``, fired from the source's read() in the task that also produces the records: the rows
handed on before the kill may or may not have reached the broker) and after ``commits/N``. ``--kill
sink.commit.after:N`` (explicit kills only, SIGKILL only) kills in the window the guide warns about: every
record of batch N is in the topic, ``commits/N`` is not written yet (:mod:`scenarios.kafka.commit_watch`
finds that moment; the Kafka sink runs no code of the harness there). It is left out of the seeded kill
points because a campaign could draw an exception there, which a watcher thread cannot raise into the query.
Guarantee checked: at-least-once (duplicates are the documented weakness; a lost row is a violation).
Pass condition: every row of the same map/filter over exactly the input added is in the output topic at
least once; the report names each duplicate by its provenance (partition, offset) and batch.
Requirements: the set-up's jar cache (Spark's Kafka connector, the broker); the broker is started by the run
(or shared by the pytest session / campaign / certify run), the output topic is the run's topic.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.base import OracleContext, Scenario, SinkContext
from scenarios.kafka.resource import BOOTSTRAP, TOPIC, kafka_resource
from scenarios.rowgen import PROVENANCE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

#: Partitions of the output topic.
OUTPUT_PARTITIONS = 2
POINTS = ("after_offsets_logged", "sink.write.mid", "sink.write.end", "after_commit_logged")
#: The map/filter drops rows whose ``value`` is a multiple of this (in Spark and, for the commit watcher, in
#: Python: :func:`kept`).
DROP_EVERY = 7


def rows(df: DataFrame) -> DataFrame:
    """The map/filter (the rows of ``file_sink_stateless``)."""
    return (
        df.where(F.col("value") % DROP_EVERY != 0)
        .withColumn("value_x2", F.col("value") * 2)
        .withColumn("bucket", F.col("key") % 4)
    )


def kept(value: int) -> bool:
    """Whether :func:`rows` keeps a row with this ``value``."""
    return value % DROP_EVERY != 0


def transform(df: DataFrame) -> DataFrame:
    """:func:`rows`, each row as one record: value its JSON, key its ``key``."""
    out = rows(df)
    return out.select(F.col("key").cast("string").alias("key"), F.to_json(F.struct(*out.columns)).alias("value"))


def oracle(batch: DataFrame, ctx: OracleContext) -> DataFrame:
    """The rows before serialisation: the output topic is parsed back into them (:func:`read_output`)."""
    return rows(batch)


def _where(ctx: SinkContext) -> tuple[str, str]:
    if BOOTSTRAP not in ctx.resources or TOPIC not in ctx.resources:
        raise RuntimeError(
            "kafka_sink: no Kafka broker in the run's resources; run it through the harness "
            "(python -m harness run kafka_sink), which starts one"
        )
    return ctx.resources[BOOTSTRAP], ctx.resources[TOPIC]


def identify(value: bytes | None) -> Hashable | None:
    """A record's row provenance ``(partition, offset, seq)`` (``None`` for a record that is no row of ours)."""
    try:
        row = json.loads(value or b"")
        return tuple(int(row[c]) for c in PROVENANCE)
    except (ValueError, TypeError, KeyError):
        return None


def batch_records(ctx: SinkContext, batch: int) -> set[Hashable] | None:
    """The provenance of every row batch ``batch`` writes: the rows of its input range (``offsets/N-1`` to
    ``offsets/N`` of the replayable source, regenerated from the run's seed) that :func:`kept` keeps; ``None``
    while ``offsets/N`` is missing."""
    from harness.engine.spec import RunSpec
    from harness.inspector import read_offsets
    from scenarios import get_scenario

    checkpoint = Path(ctx.checkpoint)
    if not (checkpoint / "offsets" / str(batch)).exists():
        return None
    spec = RunSpec.load(Path(ctx.output).parent / "spec.json")  # the run directory's spec (RunPaths)
    config = get_scenario(spec.scenario).source_config(spec.seed)
    end = read_offsets(checkpoint, batch).sources[0] or {}
    start = (read_offsets(checkpoint, batch - 1).sources[0] or {}) if batch > 0 else {}
    return {
        tuple(row[:3])  # (partition, offset, seq), then key, value, event_time (rowgen.SCHEMA_DDL)
        for p, e in end.items()
        for row in config.rows(int(p), int(start.get(p, 0)), int(e))
        if kept(row[4])
    }


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Spark's Kafka sink into the run's topic (created here); starts the commit watcher when a
    ``sink.commit.after`` kill is planned."""
    from scenarios.kafka import client
    from scenarios.kafka.commit_watch import watch_commits

    bootstrap, topic = _where(ctx)
    if not client.topic_exists(bootstrap, topic):
        client.create_topic(bootstrap, topic, OUTPUT_PARTITIONS)
    watch_commits(ctx.faults, ctx.checkpoint, ctx.output, bootstrap, topic, lambda n: batch_records(ctx, n), identify)
    return writer.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("topic", topic)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Every record of the output topic (``read_committed``), its JSON value parsed into ``schema``."""
    return read_topic(spark, *_where(ctx), schema)


def read_topic(spark: SparkSession, bootstrap: str, topic: str, schema: StructType) -> DataFrame:
    """Every record of ``topic`` (``read_committed``), its JSON value parsed into ``schema``."""
    from scenarios.kafka import client

    values: list[tuple[str]] = []
    if client.topic_exists(bootstrap, topic):
        start, end = client.start_offsets(bootstrap, topic), client.end_offsets(bootstrap, topic)
        ranges = {p: (start.get(p, 0), e) for p, e in end.items() if e > start.get(p, 0)}
        fetched = client.read_range(bootstrap, topic, ranges, isolation="read_committed") if ranges else []
        values = [((f.value or b"").decode(),) for f in fetched]
    raw = spark.createDataFrame(values, "value STRING")
    return raw.select(F.from_json("value", schema).alias("r")).select("r.*")


SCENARIO = Scenario(
    name="kafka_sink",
    summary="map/filter -> Spark's Kafka sink, read back read_committed (expected: at-least-once)",
    guarantee="at-least-once",
    kill_points=POINTS,
    transform=transform,
    oracle=oracle,
    attach_sink=attach_sink,
    read_output=read_output,
    resource=kafka_resource,
)
