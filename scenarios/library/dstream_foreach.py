"""A DStream application: ``textFileStream`` -> map/filter -> ``foreachRDD`` writing each batch's rows.

Purpose: the DStream pipeline teams still run, recovered with ``StreamingContext.getOrCreate``. The setup function
reads the directory the harness fills (JSON lines, provenance first), keeps the rows whose ``key % 4 != 0``, adds
``doubled = value * 2`` and writes each batch from the driver in ``foreachRDD``.
Faults: SIGKILL at ``dstream.batch.start`` (the batch's checkpoint is written, its output not begun) and at
``dstream.batch.end`` (its output done, the checkpoint that marks it done not written), and ``sink.step`` faults
inside the ``foreachRDD`` function.
Guarantee checked: exactly-once. The function writes the batch to a file named by its batch time, written hidden
and renamed into place: a batch re-run after a restart (a pending batch of the checkpoint) replaces its own file,
the transactional-by-batch-time output Spark's guide asks for. Pass condition: the rows of the output files equal,
as a multiset, the same filter over exactly the files the harness published.
Its one-bug twin is :mod:`scenarios.library.dstream_foreach_naive`.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from functools import partial
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

COLUMNS = ("partition", "offset", "seq", "key", "value")


def keep(row: dict[str, Any]) -> bool:
    return int(row["key"]) % 4 != 0


def shape(row: dict[str, Any]) -> str:
    out = {c: row[c] for c in COLUMNS}
    out["doubled"] = int(row["value"]) * 2
    return json.dumps(out)


def transform(df: DataFrame) -> DataFrame:
    """The same pipeline in batch: the oracle."""
    return df.filter(F.col("key") % 4 != 0).select(*COLUMNS, (F.col("value") * 2).alias("doubled"))


def write_batch(output: str, t: datetime, rdd: Any) -> None:
    """Write batch ``t``'s rows to ``batch-<ms>.jsonl``, hidden then renamed: a re-run replaces its own file."""
    rows = rdd.collect()
    if not rows:
        return
    name = f"batch-{round(t.timestamp() * 1000)}.jsonl"
    tmp = Path(output) / f".{name}.tmp"
    with open(tmp, "w") as fh:
        fh.write("".join(line + "\n" for line in rows))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, Path(output) / name)


def append_batch(output: str, t: datetime, rdd: Any) -> None:
    """Append batch ``t``'s rows to ``rows.jsonl`` (the bug: a re-run appends them again)."""
    rows = rdd.collect()
    if not rows:
        return
    with open(Path(output) / "rows.jsonl", "a") as fh:
        fh.write("".join(line + "\n" for line in rows))
        fh.flush()
        os.fsync(fh.fileno())


def build(write: Any, sc: SparkContext, ctx: DStreamContext) -> StreamingContext:
    from pyspark.streaming import StreamingContext

    ssc = StreamingContext(sc, ctx.batch_seconds)
    ssc.checkpoint(ctx.checkpoint)
    Path(ctx.output).mkdir(parents=True, exist_ok=True)
    rows = ssc.textFileStream(ctx.input_dir).map(json.loads).filter(keep).map(shape)
    output = ctx.output
    rows.foreachRDD(lambda t, rdd: write(output, t, rdd))
    return ssc


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return read_json_output(spark, ctx, schema, "*.jsonl")


SCENARIO = dstream_scenario(
    name="dstream_foreach",
    summary="DStream textFileStream -> map/filter -> foreachRDD file per batch time (expected: exactly-once)",
    guarantee="exactly-once",
    setup=partial(build, write_batch),
    transform=transform,
    read_output=read_output,
)
