"""Stateless map/filter -> Spark's Delta streaming sink (append).

Purpose: the exactly-once sink teams use most after files: ``writeStream.format("delta")``. Delta's sink
commits each batch's files together with a ``txn`` action (``SetTransaction``) of the query's id and the
batch id, and skips a batch whose id is not above the table's txn for the query (``DeltaSink.addBatch``), so a
batch Spark re-runs after its Delta commit writes nothing.
Faults: SIGKILL at every point the replayable source reaches (planning, after ``offsets/N``, in the read
tasks before and while the sink's write tasks run, after ``commits/N``). The window between Delta's commit
and ``commits/N`` has no harness code in it: an explicit ``--kill sink.commit.after:N`` is carried out by a
watcher on the table's log (:mod:`scenarios.delta.commit_watch`, SIGKILL only, so campaigns do not draw it).
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
    kill_points=READ_POINTS,
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_delta,
    **DELTA,
)
