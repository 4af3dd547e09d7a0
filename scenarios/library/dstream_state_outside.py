"""The totals of :mod:`scenarios.library.dstream_state` kept outside Spark: added into a file by each batch.

Purpose: the DStream pattern that keeps state in an external store: each batch reduces its own rows by group and
a ``foreachRDD`` function adds them into ``totals.jsonl`` (read, add, replace). Spark's checkpoint knows nothing of
what the function already added.
Faults: SIGKILL at ``dstream.batch.start`` and ``dstream.batch.end``, ``sink.step`` faults inside the function.
Guarantee checked: at-least-once. A batch the checkpoint holds as pending after a restart runs again and adds its
rows a second time. Expected: over-counted groups (``wrong-value``) after a kill at ``dstream.batch.end`` or after
the function replaced the file.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.dstream import DStreamContext, dstream_scenario
from scenarios.library.dstream_state import TOTALS, pair, read_output, replace_totals, transform

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.streaming import StreamingContext


def add_batch(output: str, t: datetime, rdd: Any) -> None:
    """Add batch ``t``'s counts and sums into ``totals.jsonl`` (the bug: a re-run adds them again)."""
    new = rdd.collect()
    if not new:
        return
    path = Path(output) / TOTALS
    old = {}
    if path.exists():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            old[row["group"]] = (row["rows"], row["total"])
    for group, (rows, total) in new:
        n, s = old.get(group, (0, 0))
        old[group] = (n + rows, s + total)
    replace_totals(output, list(old.items()))


def build(sc: SparkContext, ctx: DStreamContext) -> StreamingContext:
    from pyspark.streaming import StreamingContext

    ssc = StreamingContext(sc, ctx.batch_seconds)
    ssc.checkpoint(ctx.checkpoint)
    Path(ctx.output).mkdir(parents=True, exist_ok=True)
    output = ctx.output
    sums = ssc.textFileStream(ctx.input_dir).map(pair).reduceByKey(lambda a, b: (a[0] + b[0], a[1] + b[1]))
    sums.foreachRDD(lambda t, rdd: add_batch(output, t, rdd))
    return ssc


SCENARIO = dstream_scenario(
    name="dstream_state_outside",
    summary="DStream per-batch sums added into totals kept outside Spark (expected: over-counts a replay)",
    guarantee="at-least-once",
    setup=build,
    transform=transform,
    read_output=read_output,
    identity=("group",),
)
