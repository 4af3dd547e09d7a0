"""Spark's own JSON file source -> stateless map/filter -> the parquet file sink.

Purpose: a pipeline whose input is a file directory, the most common source after Kafka, with no
Python code in the source's hot path. The harness publishes one JSON file per partition and round
(:mod:`scenarios.filedir`: written hidden, renamed into place) holding the replayable source's rows,
so every row still carries its provenance and an anomaly is located in the batch whose file-source
log (``sources/0/N``) lists the row's file.
Faults: SIGKILL of the driver's process groups after ``offsets/N`` is logged and after ``commits/N``
(both fired by the checkpoint watcher, within a poll interval), and timed kills (``batch.time``) in
between. Each run of the query is one batch (no ``maxFilesPerTrigger``).
Guarantee checked: exactly-once (the file source's log replays batch N's files, the file sink's log
hides an uncommitted attempt's files). Pass condition: the rows readable through the sink equal, as a
multiset, the same transform over exactly the files the harness published.
:data:`NAIVE_APPEND` is its one-bug twin for tests: the same input into a ``foreachBatch`` that
appends without batch-id dedup (CSV files, to cover that format too).
"""

from __future__ import annotations

import dataclasses

from scenarios.base import Scenario
from scenarios.library.file_sink_stateless import transform
from scenarios.library.foreachbatch_append_naive import SCENARIO as APPEND_NAIVE
from scenarios.presets import FILE_SINK
from scenarios.sources import FileDirectory

#: Reached by the checkpoint watcher (SIGKILL only). The file sink's ``sink.commit.after`` (a watcher on
#: ``_spark_metadata/N``) is left out, as in the other file-sink scenarios: it races Spark's ``commits/N``.
WATCHED_POINTS = ("after_offsets_logged", "after_commit_logged")

SCENARIO = Scenario(
    name="file_source_json",
    summary="Spark's JSON file source -> map/filter -> parquet file sink (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=WATCHED_POINTS,
    transform=transform,
    source=FileDirectory("json"),
    **FILE_SINK,
)

NAIVE_APPEND = dataclasses.replace(
    APPEND_NAIVE,
    name="file_source_csv_append_naive",
    summary="Spark's CSV file source -> foreachBatch append without batch-id dedup (expected: duplicates)",
    kill_points=("after_offsets_logged", "sink.commit.after"),
    source=FileDirectory("csv"),
)
