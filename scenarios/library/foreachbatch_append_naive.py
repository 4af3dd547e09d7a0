"""``foreachBatch`` appending each batch to parquet, without batch-id dedup.

Purpose: a known at-least-once sink, to show the checker can fail. Faults:
SIGKILL after ``offsets/N`` is logged, mid-write, and after the function has
appended batch N but before Spark writes ``commits/N`` (``sink.commit.after``).
Guarantee checked: exactly-once, which this sink does *not* give: on restart
Spark re-runs batch N and the function appends its rows a second time.
Pass condition for the harness: the run is flagged with ``duplicate``
anomalies naming batch N and the kill before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import Scenario, SinkContext, read_parquet_output
from scenarios.library.file_sink_stateless import transform

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    def append_batch(batch_df: DataFrame, batch_id: int) -> None:
        batch_df.write.mode("append").parquet(ctx.output)

    return writer.foreachBatch(crash_injecting_foreach_batch(append_batch, ctx.faults))


SCENARIO = Scenario(
    name="foreachbatch_append_naive",
    summary="foreachBatch append without batch-id dedup (expected: duplicates on replay)",
    guarantee="at-least-once",
    kill_points=("after_offsets_logged", "sink.write.mid", "sink.commit.after"),
    sink_steps=True,
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_parquet_output,
)
