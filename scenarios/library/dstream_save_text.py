"""A DStream application writing each batch with ``saveAsTextFiles``.

Purpose: Spark's own DStream file output. The setup function applies the map/filter of
:mod:`scenarios.library.dstream_foreach` and calls ``saveAsTextFiles(<output>/batch)``: every batch time T writes
the directory ``batch-T`` (part files, one per RDD partition) through Hadoop's output committer.
Faults: SIGKILL at ``dstream.batch.start`` and ``dstream.batch.end`` (after the directory is written, before the
checkpoint marks the batch done).
Guarantee checked: exactly-once, which Spark's guide claims for ``saveAs***Files`` ("idempotent ... the file will
simply get overwritten with the same data"): a batch re-run after a restart writes the same ``batch-T`` again.
Pass condition: the part files of all ``batch-*`` directories hold, as a multiset, the filter of exactly the files
the harness published. Measured by ``certify`` (row ``dstream-save-text``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from scenarios.dstream import DStreamContext, dstream_scenario, read_json_output
from scenarios.library.dstream_foreach import keep, shape, transform

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType
    from pyspark.streaming import StreamingContext

    from scenarios.base import SinkContext


def build(sc: SparkContext, ctx: DStreamContext) -> StreamingContext:
    from pyspark.streaming import StreamingContext

    ssc = StreamingContext(sc, ctx.batch_seconds)
    ssc.checkpoint(ctx.checkpoint)
    Path(ctx.output).mkdir(parents=True, exist_ok=True)
    rows = ssc.textFileStream(ctx.input_dir).map(json.loads).filter(keep).map(shape)
    rows.saveAsTextFiles(str(Path(ctx.output) / "batch"))
    return ssc


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return read_json_output(spark, ctx, schema, "batch-*/part-*")


SCENARIO = dstream_scenario(
    name="dstream_save_text",
    summary="DStream textFileStream -> map/filter -> saveAsTextFiles (expected: exactly-once, as documented)",
    guarantee="exactly-once",
    setup=build,
    transform=transform,
    read_output=read_output,
    sink_steps=False,
)
