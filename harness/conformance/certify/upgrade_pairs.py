"""The pipeline pairs of ``certify --upgrades``: per row of the programming guide's recovery table, a version 1
from the library and a version 2 one change away. The library's own upgrade scenarios
(``scenarios/library/upgrade_*.py``) cover the filter, the grouping key, the aggregate function and the join
condition; the pairs here cover the other rows. Each ``V1_*`` names its ``V2_*`` as ``upgrade_to``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from scenarios.base import read_parquet_output
from scenarios.kafka.resource import kafka_resource
from scenarios.kafka.source import KafkaTopic
from scenarios.library import (
    agg_watermark_append,
    dedup_stream,
    file_sink_stateless,
    kafka_file_sink,
    kafka_sink,
    pandas_state_first_seen,
    stream_stream_join,
    tws_sessions,
)
from scenarios.library.dedup_stream import DEDUP_KEY, with_dedup_columns
from scenarios.library.stream_stream_join import CONDITION, PAIR, side
from scenarios.sources import Replayable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

    from scenarios.base import OracleContext, SinkContext

HERE = "harness.conformance.certify.upgrade_pairs"
STATELESS = file_sink_stateless.SCENARIO


def _v1(base: object, tag: str) -> object:
    return replace(base, name=f"upgrade_v1_{tag}", upgrade_to=f"{HERE}:V2_{tag.upper()}")  # type: ignore[type-var]


# -- projections ------------------------------------------------------------------------------------------------
def _triple(df: DataFrame) -> DataFrame:
    """``file_sink_stateless`` with ``value_x2`` computed as ``value * 3``: the same output schema."""
    return file_sink_stateless.transform(df).withColumn("value_x2", F.col("value") * 3)


def _one_more_column(df: DataFrame) -> DataFrame:
    return file_sink_stateless.transform(df).withColumn("value_mod", F.col("value") % 10)


V1_PROJECTION = _v1(STATELESS, "projection")
V2_PROJECTION = replace(STATELESS, name="upgrade_v2_projection", transform=_triple)
V1_NEW_SCHEMA = _v1(STATELESS, "new_schema")
V2_NEW_SCHEMA = replace(STATELESS, name="upgrade_v2_new_schema", transform=_one_more_column)


# -- sources ----------------------------------------------------------------------------------------------------
def _two_sources(df: DataFrame) -> DataFrame:
    """A second source (Spark's ``rate``), unioned with no rows of its own: the query now has two sources."""
    rate = df.sparkSession.readStream.format("rate").option("rowsPerSecond", 1).load().where(F.lit(False))
    extra = rate.select(*(F.lit(None).cast(f.dataType).alias(f.name) for f in df.schema.fields))
    return file_sink_stateless.transform(df.unionByName(extra))


V1_SOURCES = _v1(STATELESS, "sources")
V2_SOURCES = replace(STATELESS, name="upgrade_v2_sources", transform=_two_sources)


def _rate_only(df: DataFrame) -> DataFrame:
    """The same columns from Spark's ``rate`` source instead of the replayable one: the source's type changed."""
    rate = df.sparkSession.readStream.format("rate").option("rowsPerSecond", 1).load()
    cols = [F.lit(0).alias("partition"), F.col("value").alias("offset"), F.lit(0).alias("seq")]
    cols += [(F.col("value") % 8).cast("int").alias("key"), F.col("value"), F.col("timestamp").alias("event_time")]
    return file_sink_stateless.transform(rate.select(*cols))


V1_SOURCE_TYPE = _v1(STATELESS, "source_type")
V2_SOURCE_TYPE = replace(STATELESS, name="upgrade_v2_source_type", transform=_rate_only)

#: Source evolution (4.2): named sources, and the offset log format that keys offsets by name.
EVOLUTION = {
    "spark.sql.streaming.queryEvolution.enableSourceEvolution": "true",
    "spark.sql.streaming.offsetLog.formatVersion": "2",
}
NAMED = replace(STATELESS, source=Replayable(name="events"), confs=EVOLUTION)


def _named_extra(df: DataFrame) -> DataFrame:
    """A second named source, ``extra``, beside ``events``: the replayable source over the run's own input (its
    tap, seed and batch limit), keeping no rows. Its offsets move with ``events``', so batch ids stay what the
    schedule predicts and a kill can be planned at one (Spark's ``rate`` source moves with the clock)."""
    import json
    from pathlib import Path

    from scenarios import get_scenario
    from scenarios.base import run_output
    from scenarios.replayable_source import FORMAT

    run_dir = Path(run_output()).parent  # the run directory (harness.engine.rundir): spec.json, tap.json
    spec = json.loads((run_dir / "spec.json").read_text())
    options = {
        **get_scenario(spec["scenario"]).source_config(int(spec["seed"])).to_options(),
        "tap": str(run_dir / "tap.json"),
        "max_rows_per_batch": str(NAMED.max_rows_per_batch),
    }
    extra = df.sparkSession.readStream.format(FORMAT).options(**options).name("extra").load().where(F.lit(False))
    return file_sink_stateless.transform(df.unionByName(extra.select(*df.columns)))


V1_NAMED = _v1(NAMED, "named")


def _stateless_oracle(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    """``file_sink_stateless``'s transform over the input: the added source has no rows (and cannot run in batch)."""
    return file_sink_stateless.transform(batch_input)


V2_NAMED = replace(NAMED, name="upgrade_v2_named", transform=_named_extra, oracle=_stateless_oracle)
#: The other way: version 1 reads ``events`` and ``extra``, version 2 drops ``extra``.
V1_NAMED_TWO = replace(
    NAMED,
    name="upgrade_v1_named_two",
    transform=_named_extra,
    oracle=_stateless_oracle,
    upgrade_to=f"{HERE}:V2_NAMED_ONE",
)
V2_NAMED_ONE = replace(NAMED, name="upgrade_v2_named_one")
V1_RATE = _v1(STATELESS, "rate")
#: Version 2 reads at most a quarter of the rows a batch.
V2_RATE = replace(STATELESS, name="upgrade_v2_rate", max_rows_per_batch=STATELESS.max_rows_per_batch // 4)


# -- sinks ------------------------------------------------------------------------------------------------------
def _moved(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.outputMode("append").format("parquet").option("path", ctx.output + "-moved")


def _both_paths(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """What a reader of the table sees after the move: both directories, each through its own sink log."""
    return (
        spark.read.schema(schema)
        .parquet(ctx.output)
        .unionByName(spark.read.schema(schema).parquet(ctx.output + "-moved"))
    )


V1_SINK_PATH = _v1(STATELESS, "sink_path")
V2_SINK_PATH = replace(STATELESS, name="upgrade_v2_sink_path", attach_sink=_moved, read_output=_both_paths)


def _files_and_topic(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """What a reader sees after a sink kind change: the file sink's directory (through its log) and the Kafka
    sink's topic (``read_committed``), the same rows (``kafka_sink`` writes ``file_sink_stateless``'s rows)."""
    return read_parquet_output(spark, ctx, schema).unionByName(kafka_sink.read_output(spark, ctx, schema))


#: File sink to Kafka sink (the guide: allowed, Kafka sees only the new data); the run has a broker from the start.
V1_SINK_KIND = _v1(replace(STATELESS, resource=kafka_resource), "sink_kind")
V2_SINK_KIND = replace(
    kafka_sink.SCENARIO, name="upgrade_v2_sink_kind", guarantee=STATELESS.guarantee, read_output=_files_and_topic
)
#: And back: Kafka sink to file sink (the guide: not allowed).
V1_SINK_KIND_BACK = replace(
    kafka_sink.SCENARIO, name="upgrade_v1_sink_kind_back", upgrade_to=f"{HERE}:V2_SINK_KIND_BACK"
)
V2_SINK_KIND_BACK = replace(
    STATELESS, name="upgrade_v2_sink_kind_back", resource=kafka_resource, read_output=_files_and_topic
)
#: Another subscribed topic (the guide: not allowed, unpredictable): version 2 subscribes to a second topic the
#: harness fills with the same records.
V1_TOPIC = _v1(kafka_file_sink.SCENARIO, "topic")
V2_TOPIC = replace(kafka_file_sink.SCENARIO, name="upgrade_v2_topic", source=KafkaTopic(topic_suffix="-renamed"))


# -- stateful operators -----------------------------------------------------------------------------------------
def _dedup_fewer_columns(df: DataFrame) -> DataFrame:
    """``dedup_stream`` deduplicating on ``key`` and ``slot`` only."""
    return with_dedup_columns(df).withWatermark("slot", "20 seconds").dropDuplicates(["key", "slot"]).select(*DEDUP_KEY)


def _left_outer(df: DataFrame) -> DataFrame:
    return (
        side(df, 0, "l")
        .join(side(df, 1, "r"), F.expr(CONDITION), "leftOuter")
        .select(F.col("l_key").alias("key"), *PAIR, "l_time", "r_time", "l_value", "r_value")
    )


V1_DEDUP = _v1(dedup_stream.SCENARIO, "dedup")
V2_DEDUP = replace(dedup_stream.SCENARIO, name="upgrade_v2_dedup", transform=_dedup_fewer_columns, oracle=None)
V1_JOIN_TYPE = _v1(stream_stream_join.SCENARIO, "join_type")
V2_JOIN_TYPE = replace(stream_stream_join.SCENARIO, name="upgrade_v2_join_type", transform=_left_outer)

# -- confs Spark restores from the checkpoint -------------------------------------------------------------------
AGG = agg_watermark_append.SCENARIO
V1_PARTITIONS = _v1(AGG, "partitions")
V2_PARTITIONS = replace(AGG, name="upgrade_v2_partitions", confs={**AGG.confs, "spark.sql.shuffle.partitions": "5"})


# -- transformWithState state schema, with and without Avro encoding ----------------------------------------------
class _Seen:
    """A list state whose values gained a field: ``put`` adds ``seen = 1`` to each value; the rest is the state's."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def put(self, rows: list[tuple[Any, ...]]) -> None:
        self.state.put([(*r, 1) for r in rows])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.state, name)


class SessionProcessorV2(tws_sessions.SessionProcessor):
    """``tws_sessions``'s processor with a field added to the ``recent`` list state's value (``seen INT``)."""

    def init(self, handle: Any) -> None:
        # As the parent's init, each variable declared once (a second declaration of one name is refused).
        self.handle = handle
        self.session_state = handle.getValueState("session", tws_sessions.SESSION_DDL, self.ttl_ms)
        self.bucket_state = handle.getMapState("buckets", "bucket INT", "rows BIGINT", self.ttl_ms)
        seen = _Seen(handle.getListState("recent", "value BIGINT, seen INT", self.ttl_ms))
        self.recent_state = seen  # type: ignore[assignment]  # the same calls, values widened


AVRO = {"spark.sql.streaming.stateStore.encodingFormat": "avro"}
TWS = tws_sessions.SCENARIO
#: Version 2's final state: ``recent`` holds the new field (null in values version 1 wrote), so it is not compared.
_V2_STATE = tuple(s for s in TWS.final_state if s.name != "recent")
V1_TWS = _v1(TWS, "tws")
V2_TWS = replace(
    TWS, name="upgrade_v2_tws", transform=tws_sessions.sessions_with(SessionProcessorV2), final_state=_V2_STATE
)
V1_TWS_AVRO = _v1(replace(TWS, confs={**TWS.confs, **AVRO}), "tws_avro")
V2_TWS_AVRO = replace(V2_TWS, name="upgrade_v2_tws_avro", confs={**TWS.confs, **AVRO})


# -- applyInPandasWithState ([flat]mapGroupsWithState): state schema, timeout type, the function -------------------
PANDAS = pandas_state_first_seen.SCENARIO
V1_FMGWS_SCHEMA = _v1(PANDAS, "fmgws_schema")
V2_FMGWS_SCHEMA = pandas_state_first_seen.V2_STATE_SCHEMA
V1_FMGWS_TIMEOUT = _v1(PANDAS, "fmgws_timeout")
V2_FMGWS_TIMEOUT = pandas_state_first_seen.V2_TIMEOUT
V1_FMGWS_FUNCTION = _v1(PANDAS, "fmgws_function")
V2_FMGWS_FUNCTION = pandas_state_first_seen.V2_FUNCTION
