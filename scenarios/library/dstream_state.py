"""A DStream application keeping running totals by key with ``updateStateByKey``, its state checkpointed.

Purpose: the stateful DStream pipeline (``updateStateByKey`` needs ``ssc.checkpoint``): per group (``key % 8``) the
number of rows and the sum of ``value`` since the start. Each batch, a ``foreachRDD`` function replaces
``totals.jsonl`` with the whole state (written hidden, renamed into place).
Faults: SIGKILL at ``dstream.batch.start`` and ``dstream.batch.end``, and ``sink.step`` faults inside the function.
Guarantee checked: exactly-once totals. The state of batch T is recomputed after a restart from the checkpointed
state RDDs and the files the checkpoint names for T, so a re-run batch writes the same totals again. Pass
condition: the last ``totals.jsonl`` equals, group by group, the count and sum over exactly the files the harness
published. Its twin :mod:`scenarios.library.dstream_state_outside` keeps the totals outside Spark and over-counts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from scenarios.dstream import DStreamContext, dstream_scenario, read_json_output

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType
    from pyspark.streaming import StreamingContext

    from scenarios.base import SinkContext

GROUPS = 8
TOTALS = "totals.jsonl"


def pair(line: str) -> tuple[int, tuple[int, int]]:
    row = json.loads(line)
    return int(row["key"]) % GROUPS, (1, int(row["value"]))


def add(new: Iterable[tuple[int, int]], old: tuple[int, int] | None) -> tuple[int, int]:
    rows, total = old or (0, 0)
    for n, v in new:
        rows, total = rows + n, total + v
    return rows, total


def transform(df: DataFrame) -> DataFrame:
    """Totals per group over the whole input: the oracle."""
    group = (F.col("key") % GROUPS).alias("group")
    return df.groupBy(group).agg(F.count("*").alias("rows"), F.sum("value").alias("total"))


def replace_totals(output: str, pairs: list[tuple[int, tuple[int, int]]]) -> None:
    """Write ``totals.jsonl`` (one line per group), hidden then renamed into place."""
    text = "".join(json.dumps({"group": g, "rows": n, "total": t}) + "\n" for g, (n, t) in sorted(pairs))
    tmp = Path(output) / f".{TOTALS}.tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, Path(output) / TOTALS)


def write_state(output: str, t: datetime, rdd: Any) -> None:
    """The whole state after batch ``t`` replaces the previous totals."""
    replace_totals(output, rdd.collect())


def build(sc: SparkContext, ctx: DStreamContext) -> StreamingContext:
    from pyspark.streaming import StreamingContext

    ssc = StreamingContext(sc, ctx.batch_seconds)
    ssc.checkpoint(ctx.checkpoint)
    Path(ctx.output).mkdir(parents=True, exist_ok=True)
    output = ctx.output
    totals = ssc.textFileStream(ctx.input_dir).map(pair).updateStateByKey(add)
    totals.foreachRDD(lambda t, rdd: write_state(output, t, rdd))
    return ssc


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return read_json_output(spark, ctx, schema, TOTALS)


SCENARIO = dstream_scenario(
    name="dstream_state",
    summary="DStream updateStateByKey totals by group, checkpointed, written whole each batch (expected: exactly-once)",
    guarantee="exactly-once",
    setup=build,
    transform=transform,
    read_output=read_output,
    identity=("group",),
)
