"""Windowed aggregation -> Spark's Delta streaming sink in complete mode.

Purpose: a stateful query whose every batch rewrites the whole result table: Delta's sink replaces the table's
files and records the batch's ``txn`` in one commit, so a reader never sees half a rewrite and a re-run batch
is skipped. Same aggregation as ``agg_watermark_append`` (10-s windows per key: count, sum of values), every
window kept (complete mode drops no state).
Faults: SIGKILL at every point the replayable source reaches in a batch (no-data batches off), on every state
store the campaign draws.
Guarantee checked: exactly-once. Pass condition: the table's current version equals, as a multiset, the batch
aggregation over all input; a group that differs is a ``wrong-value`` with the Delta version of its row.
Requirements: Delta's jars (``harness setup`` fetches them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scenarios.base import OracleContext, Scenario, SinkContext
from scenarios.delta.sinks import read_delta, table_path
from scenarios.library.agg_watermark_append import GROUP, aggregate
from scenarios.presets import DELTA, EVENT_TIME, NO_DATA_BATCHES_OFF, READ_POINTS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.outputMode("complete").format("delta").option("path", table_path(ctx))


def all_windows(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    """Every window's aggregate over all input: what complete mode leaves in the table."""
    return aggregate(batch_input)


SCENARIO = Scenario(
    name="delta_sink_complete",
    summary="10-s window counts -> Delta streaming sink, complete mode (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=READ_POINTS,
    transform=aggregate,
    attach_sink=attach_sink,
    read_output=read_delta,
    identity=GROUP,
    oracle=all_windows,
    confs=NO_DATA_BATCHES_OFF,
    stateful=True,
    **EVENT_TIME,
    **DELTA,
)
