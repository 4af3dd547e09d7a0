"""DStream setup functions the harness must refuse (issue 31's bad input): ``module:ATTRIBUTE`` scenarios."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from scenarios.dstream import DStreamContext, dstream_scenario
from scenarios.library.dstream_foreach import read_output, transform, write_batch

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.streaming import StreamingContext


def no_checkpoint(sc: SparkContext, ctx: DStreamContext) -> StreamingContext:
    """A correct pipeline but for the checkpoint it never sets."""
    from pyspark.streaming import StreamingContext

    ssc = StreamingContext(sc, ctx.batch_seconds)
    output = ctx.output
    ssc.textFileStream(ctx.input_dir).map(json.loads).map(json.dumps).foreachRDD(
        lambda t, rdd: write_batch(output, t, rdd)
    )
    return ssc


def queue_input(sc: SparkContext, ctx: DStreamContext) -> StreamingContext:
    """Reads a queueStream (the way DStream tests often feed data), which Spark cannot checkpoint."""
    from pyspark.streaming import StreamingContext

    ssc = StreamingContext(sc, ctx.batch_seconds)
    ssc.checkpoint(ctx.checkpoint)
    output = ctx.output
    ssc.queueStream([sc.parallelize(['{"partition": 0}'])]).foreachRDD(lambda t, rdd: write_batch(output, t, rdd))
    return ssc


def other_directory(sc: SparkContext, ctx: DStreamContext) -> StreamingContext:
    """Reads a directory of its own instead of the one the harness fills."""
    from pyspark.streaming import StreamingContext

    ssc = StreamingContext(sc, ctx.batch_seconds)
    ssc.checkpoint(ctx.checkpoint)
    output = ctx.output
    ssc.textFileStream(ctx.output).foreachRDD(lambda t, rdd: write_batch(output, t, rdd))
    return ssc


NO_CHECKPOINT = dstream_scenario(
    name="dstream_no_checkpoint",
    summary="a DStream setup function that sets no checkpoint",
    guarantee="exactly-once",
    setup=no_checkpoint,
    transform=transform,
    read_output=read_output,
)
QUEUE_STREAM = dstream_scenario(
    name="dstream_queue_stream",
    summary="a DStream setup function reading a queueStream",
    guarantee="exactly-once",
    setup=queue_input,
    transform=transform,
    read_output=read_output,
)
OTHER_DIRECTORY = dstream_scenario(
    name="dstream_other_directory",
    summary="a DStream setup function reading another directory than ctx.input_dir",
    guarantee="exactly-once",
    setup=other_directory,
    transform=transform,
    read_output=read_output,
)
