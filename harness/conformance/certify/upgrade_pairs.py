"""The pipeline pairs of ``certify --upgrades``: per row of the programming guide's recovery table, a version 1
from the library and a version 2 one change away. The library's own upgrade scenarios
(``scenarios/library/upgrade_*.py``) cover the filter, the grouping key, the aggregate function and the join
condition; the pairs here cover the other rows. Each ``V1_*`` names its ``V2_*`` as ``upgrade_to``."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.library import agg_watermark_append, dedup_stream, file_sink_stateless, stream_stream_join
from scenarios.library.dedup_stream import DEDUP_KEY, with_dedup_columns
from scenarios.library.stream_stream_join import CONDITION, PAIR, side

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

    from scenarios.base import SinkContext

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
