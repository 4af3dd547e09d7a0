"""Orders from Kafka, upserted into a Delta table: one ``MERGE`` per micro-batch.

Each Kafka record is an order (JSON ``{"key": customer, "value": amount}``). The stream keeps the record's
Kafka partition and offset, which identify an order, and ``foreachBatch`` merges every batch into the table
on them, with Delta's ``txnAppId``/``txnVersion`` session confs set around the merge, so a batch Spark
replays after a crash is skipped by Delta (docs/delta.md: "MERGE with the session txn confs").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from delta.tables import DeltaTable
from pyspark.sql import functions as F

from scenarios import Scenario
from scenarios.kafka import KafkaTopic

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

    from scenarios import SinkContext

APP_ID = "orders-to-delta"


def transform(kafka: DataFrame) -> DataFrame:
    order = F.from_json(F.col("value").cast("string"), "key INT, value BIGINT")
    orders = kafka.select("partition", "offset", order.alias("o"))
    return orders.select(
        "partition",
        "offset",
        F.col("o.key").alias("customer"),
        (F.col("o.value") % 1000).alias("amount"),
    )


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    table = f"{ctx.output}/orders"

    def upsert(batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        if not DeltaTable.isDeltaTable(spark, table):
            batch.limit(0).write.format("delta").save(table)
        spark.conf.set("spark.databricks.delta.write.txnAppId", APP_ID)
        spark.conf.set("spark.databricks.delta.write.txnVersion", str(batch_id))
        try:
            (
                DeltaTable.forPath(spark, table)
                .alias("t")
                .merge(batch.alias("s"), "t.partition = s.partition AND t.offset = s.offset")
                .whenMatchedUpdateAll()
                .whenNotMatchedInsertAll()
                .execute()
            )
        finally:
            spark.conf.unset("spark.databricks.delta.write.txnAppId")
            spark.conf.unset("spark.databricks.delta.write.txnVersion")

    return writer.foreachBatch(upsert)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.read.format("delta").load(f"{ctx.output}/orders").select(*schema.fieldNames())


ORDERS = Scenario(
    name="orders_to_delta",
    summary="Kafka orders -> foreachBatch MERGE into Delta by partition and offset",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "sink.commit.before", "sink.commit.after", "after_commit_logged"),
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_output,
    source=KafkaTopic(raw=True),
    identity=("partition", "offset"),
    jars=("delta-spark",),
)
