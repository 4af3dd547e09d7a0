"""An orders DStream application, written from docs/dstreams.md: text files -> keep paid orders, add a tax
column -> each batch written to one file named by its batch time (staged, then renamed), so a batch Spark runs
again after a restart replaces its own file. Its twin names the file by the clock when it writes: a batch run
again writes a second file, and its rows come twice."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from pyspark.sql import functions as F
from pyspark.streaming import StreamingContext

from scenarios.dstream import dstream_scenario, read_json_output


def _paid(row: dict[str, Any]) -> bool:
    return int(row["key"]) % 4 != 0


def _with_tax(row: dict[str, Any]) -> dict[str, Any]:
    return {"partition": row["partition"], "offset": row["offset"], "seq": row["seq"], "key": row["key"],
            "value": row["value"], "tax": row["value"] // 10}  # fmt: skip


def _write(output: str, name: str, rdd: Any) -> None:
    rows = rdd.collect()
    if not rows:
        return
    target = Path(output) / name
    staging = target.with_name(f".{target.name}.tmp")
    staging.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(staging, target)


def _by_batch_time(output: str) -> Any:
    return lambda t, rdd: _write(output, f"orders-{int(t.timestamp() * 1000)}.jsonl", rdd)


def _by_clock(output: str) -> Any:
    return lambda t, rdd: _write(output, f"orders-{time.time_ns()}.jsonl", rdd)


def _setup(name_files: Any) -> Any:
    def setup(sc: Any, ctx: Any) -> StreamingContext:
        ssc = StreamingContext(sc, ctx.batch_seconds)
        ssc.checkpoint(ctx.checkpoint)
        orders = ssc.textFileStream(ctx.input_dir).map(json.loads).filter(_paid).map(_with_tax)
        Path(ctx.output).mkdir(parents=True, exist_ok=True)
        orders.foreachRDD(name_files(ctx.output))
        return ssc

    return setup


def transform(df: Any) -> Any:
    return df.where(F.col("key") % 4 != 0).select(
        "partition", "offset", "seq", "key", "value", F.floor(F.col("value") / 10).cast("long").alias("tax")
    )


def read_output(spark: Any, ctx: Any, schema: Any) -> Any:
    return read_json_output(spark, ctx, schema, "orders-*.jsonl")


ORDERS = dstream_scenario(
    name="orders_dstream",
    summary="paid orders with tax, one file per batch time",
    guarantee="exactly-once",
    setup=_setup(_by_batch_time),
    transform=transform,
    read_output=read_output,
)
ORDERS_BY_CLOCK = dstream_scenario(
    name="orders_dstream_by_clock",
    summary="paid orders with tax, one file per write, named by the clock",
    guarantee="exactly-once",
    setup=_setup(_by_clock),
    transform=transform,
    read_output=read_output,
)
