"""Spark's Kafka source -> stateless map/filter -> the parquet file sink.

Purpose: the most common production input, read by Spark's own Kafka source (``format("kafka")``, the
connector's jars resolved at set-up) from a topic of a real KRaft broker (:mod:`scenarios.kafka`). The
harness produces the replayable rows as JSON records, one per Kafka offset, so every row still carries
its provenance: its ``partition`` and ``offset`` are the record's Kafka partition and offset, and an
anomaly is located in the batch whose ``offsets/N`` covers that offset.
Faults: SIGKILL of the driver's process groups after ``offsets/N`` is logged and after ``commits/N``
(the checkpoint watcher), and timed kills in between; no Python code runs in the source's hot path.
Each run of the query is one batch (no ``maxOffsetsPerTrigger``).
Guarantee checked: exactly-once (the Kafka source replays batch N's offset range from ``offsets/N``, the
file sink's log hides an uncommitted attempt's files).
Pass condition: the rows readable through the sink equal, as a multiset, the same transform over the
topic's records of ``[the source's recorded start, the newest committed batch's end)``, read back from the
broker.
Requirements: Spark's Kafka connector and the broker's jars (``harness setup`` fetches them); the broker is
started by the run (or shared by the pytest session / campaign).
:data:`NAIVE_APPEND` is its one-bug twin: the same topic into a ``foreachBatch`` that appends without
batch-id dedup (duplicates after a kill between the append and ``commits/N``); :data:`SKIPS_LOST` reads
with ``failOnDataLoss=false`` (records aged out before it read them are skipped: a loss that setting allows).
"""

from __future__ import annotations

import dataclasses

from scenarios.base import Scenario
from scenarios.kafka.source import KafkaTopic
from scenarios.library.file_sink_stateless import transform
from scenarios.library.foreachbatch_append_naive import SCENARIO as APPEND_NAIVE
from scenarios.presets import FILE_SINK

#: Reached by the checkpoint watcher (SIGKILL only); see ``file_source_json`` for why ``sink.commit.after``
#: is left out of a file-sink scenario.
WATCHED_POINTS = ("after_offsets_logged", "after_commit_logged")

SCENARIO = Scenario(
    name="kafka_file_sink",
    summary="Spark's Kafka source -> map/filter -> parquet file sink (expected: exactly-once)",
    guarantee="exactly-once",
    kill_points=WATCHED_POINTS,
    transform=transform,
    source=KafkaTopic(),
    **FILE_SINK,
)

NAIVE_APPEND = dataclasses.replace(
    APPEND_NAIVE,
    name="kafka_foreachbatch_append_naive",
    summary="Spark's Kafka source -> foreachBatch append without batch-id dedup (expected: duplicates)",
    kill_points=("after_offsets_logged", "sink.commit.after"),
    source=KafkaTopic(),
)

#: The same pipeline with ``failOnDataLoss=false``: records deleted before the query read them (an
#: ``age_out_records`` nemesis) are skipped, which the verdict reports as a loss allowed by that setting.
SKIPS_LOST = dataclasses.replace(
    SCENARIO,
    name="kafka_file_sink_skips_lost",
    summary="kafka_file_sink with failOnDataLoss=false (expected: exactly-once but for records aged out unread)",
    source=KafkaTopic(options=(("failOnDataLoss", "false"),)),
)
