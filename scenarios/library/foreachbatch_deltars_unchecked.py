"""``foreachbatch_deltars_txn`` without the check: one bug away from it.

Purpose: the broken twin. The bug: the function records an application transaction with every append but
never reads it back, trusting delta-rs to skip a repeated version, which it does not (delta-rs #2580). A batch
Spark re-runs after its append committed is appended again, with the same txn version in a second commit.
Faults: as ``foreachbatch_deltars_txn``. Pass condition for the harness: after a ``sink.commit.after`` kill of a
batch with data the run is flagged with ``duplicate`` rows; ``inspect --delta`` names the repeated txn.
Requirements: as ``foreachbatch_deltars_txn``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import SinkContext
from scenarios.delta.sinks import app_id, deltars_append, table_path
from scenarios.library.foreachbatch_deltars_txn import SCENARIO as CORRECT

if TYPE_CHECKING:
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    write = deltars_append(table_path(ctx), app_id(ctx, "deltars"), check_first=False)
    return writer.foreachBatch(crash_injecting_foreach_batch(write, ctx.faults))


SCENARIO = dataclasses.replace(
    CORRECT,
    name="foreachbatch_deltars_unchecked",
    summary="foreachBatch delta-rs append with a txn never checked (expected: duplicates on replay)",
    guarantee="at-least-once",
    attach_sink=attach_sink,
)
