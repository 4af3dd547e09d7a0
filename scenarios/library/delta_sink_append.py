"""Stateless map/filter -> Spark's Delta streaming sink (append).

Purpose: the exactly-once sink teams use most after files: ``writeStream.format("delta")``. Delta's sink
commits each batch's files together with a ``txn`` action (``SetTransaction``) of the query's id and the
batch id, and skips a batch whose id is not above the table's txn for the query (``DeltaSink.addBatch``), so a
batch Spark re-runs after its Delta commit writes nothing.
Faults: SIGKILL at every point the replayable source reaches (planning, after ``offsets/N``, in the read
tasks before and while the sink's write tasks run, after ``commits/N``), and between Delta's commit of batch
N and ``commits/N`` (``sink.commit.after``), where no harness code runs: a watcher on the table's log carries it
out (:mod:`scenarios.delta.commit_watch`, SIGKILL only: campaigns draw it as a kill, ``watcher_points``). That
window is where the sink's dedup by ``(queryId, batchId)`` matters; a restart under another query id (a lost
checkpoint ``metadata`` file, SPARK-55058) writes the batch twice there.
Guarantee checked: exactly-once. Pass condition: the table's current version equals, as a multiset, the same
transform over exactly the input added; an anomaly names its batch and the Delta version that holds the row.
Requirements: Delta's jars (``harness setup`` fetches them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scenarios.base import Scenario, SinkContext
from scenarios.delta.sinks import read_delta, table_path
from scenarios.library.file_sink_stateless import transform
from scenarios.presets import DELTA, READ_POINTS

if TYPE_CHECKING:
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """Delta's sink into the run's table; starts the Delta commit watcher when a ``sink.commit.after`` kill is
    planned."""
    from scenarios.delta.commit_watch import watch_delta_commits

    watch_delta_commits(ctx)
    return writer.outputMode("append").format("delta").option("path", table_path(ctx))


SCENARIO = Scenario(
    name="delta_sink_append",
    summary="map/filter -> Delta streaming sink, append (expected: exactly-once)",
    guarantee="exactly-once",
    # In protocol order: Delta's commit of batch N comes before commits/N (after_commit_logged).
    kill_points=(*READ_POINTS[:-1], "sink.commit.after", READ_POINTS[-1]),
    watcher_points=("sink.commit.after",),
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_delta,
    **DELTA,
)
