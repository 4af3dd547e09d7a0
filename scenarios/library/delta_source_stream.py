"""A Delta table read as a stream (``maxFilesPerTrigger``) -> map/filter -> Spark's Delta streaming sink.

Purpose: the medallion hop teams run between Delta tables (bronze -> silver). The harness appends the input
to a Delta table, one commit and one file per partition and range (:mod:`scenarios.delta.source`); the query
reads it with Spark's Delta source, one version a batch, and writes through Delta's sink, so both ends of the
exactly-once contract are Delta's: the source replays batch N from the reservoir version and file index in
``offsets/N``, the sink skips a batch its table already holds.
Faults: SIGKILL of the driver's process groups after ``offsets/N`` is logged (the batch is about to read its
version) and after ``commits/N`` (both by the checkpoint watcher), and timed kills while batches read and
write. No harness code runs in the source's hot path.
Guarantee checked: exactly-once. Pass condition: the output table equals, as a multiset, the same transform
over every row of the input table; an anomaly names the batch (located through the Delta source's offsets)
and the output's Delta versions.
:data:`BY_BYTES` reads with ``maxBytesPerTrigger`` instead (several versions a batch); :data:`NAIVE_APPEND` is
a one-bug twin for tests: the same input into ``foreachbatch_delta_naive``'s append without txn options.
Requirements: Delta's jars (``harness setup`` fetches them); ``deltalake`` writes the input.
"""

from __future__ import annotations

import dataclasses

from scenarios.base import Scenario
from scenarios.delta.sinks import read_delta
from scenarios.delta.source import DeltaTableSource
from scenarios.library.delta_sink_append import attach_sink
from scenarios.library.file_sink_stateless import transform
from scenarios.library.foreachbatch_delta_naive import SCENARIO as DELTA_NAIVE
from scenarios.presets import DELTA

#: Reached by the checkpoint watcher (SIGKILL only).
WATCHED_POINTS = ("after_offsets_logged", "after_commit_logged")

SCENARIO = Scenario(
    name="delta_source_stream",
    summary="Delta table source (one version a batch) -> map/filter -> Delta sink (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=WATCHED_POINTS,
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_delta,
    source=DeltaTableSource(),
    **DELTA,
)

BY_BYTES = dataclasses.replace(
    SCENARIO,
    name="delta_source_stream_by_bytes",
    summary="delta_source_stream with maxBytesPerTrigger=1k (several versions a batch)",
    source=DeltaTableSource(max_files_per_trigger=None, max_bytes_per_trigger="1k"),
)

NAIVE_APPEND = dataclasses.replace(
    DELTA_NAIVE,
    name="delta_source_foreachbatch_naive",
    summary="Delta table source -> foreachBatch Delta append without txn options (expected: duplicates)",
    kill_points=("after_offsets_logged", "sink.commit.after"),
    source=DeltaTableSource(),
)
