"""Spark's Kafka source -> stateless map/filter -> a Python ``foreach`` writer, under every trigger.

Purpose: ``foreach`` is the Python sink the epoch triggers accept, so it is how a Python team writes from
Real-time Mode (``--trigger 'real-time:1 second'``; this pipeline lowers Spark's 5 s minimum to 1 s) or from
continuous processing. :data:`SCENARIO` appends each row to a file as it comes (naive); :data:`UPSERT` writes
each row to a file named by its provenance, so a replayed row overwrites itself; :data:`EPOCH_DEDUP` skips a
``(partition_id, epoch_id)`` it wrote before (the pattern the Programming Guide warns against); :data:`DEDUP` drops
duplicate
keys first (``dropDuplicates``, RocksDB, checkpoint format 2: the stateful form Real-time Mode documents).
Faults: SIGKILL of the driver's process groups when ``offsets/N`` and ``commits/N`` appear (the checkpoint
watcher; N is the epoch in an epoch run), and inside the writer (``sink.write.start|mid|end``, with the epoch
as the batch: :mod:`scenarios.foreach_sink`).
Guarantee checked: at-least-once for the naive append (an epoch or batch re-run after a restart appends its
rows again), exactly-once for the upsert and the dedup. Measured, not assumed: under continuous processing
PySpark's ``foreach`` fails at the second epoch (the run reports the query's failure).
Pass condition: every row of the map/filter over the input topic's records the committed epochs cover is in
the output at least once (naive) or exactly once (upsert, dedup).
Requirements: the set-up's jar cache; the broker is started by the run (or shared).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.base import Scenario
from scenarios.foreach_sink import foreach_sink, read_foreach_output
from scenarios.kafka.source import KafkaTopic
from scenarios.library.kafka_sink import rows
from scenarios.library.kafka_to_kafka import ALL_TRIGGERS, REAL_TIME_CONFS
from scenarios.rowgen import PROVENANCE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: The watcher's points and the writer's own.
POINTS = ("after_offsets_logged", "sink.write.start", "sink.write.mid", "sink.write.end", "after_commit_logged")

SCENARIO = Scenario(
    name="kafka_foreach",
    summary="Kafka source -> map/filter -> foreach appending rows, any trigger (expected: duplicates on replay)",
    guarantee="at-least-once",
    kill_points=POINTS,
    transform=rows,
    attach_sink=foreach_sink("append", PROVENANCE),
    read_output=read_foreach_output,
    source=KafkaTopic(),
    source_write_points=False,
    confs=REAL_TIME_CONFS,
    triggers=ALL_TRIGGERS,
)

UPSERT = dataclasses.replace(
    SCENARIO,
    name="kafka_foreach_upsert",
    summary="Kafka source -> map/filter -> foreach writing each row under its provenance (expected: exactly-once)",
    guarantee="exactly-once",
    attach_sink=foreach_sink("upsert", PROVENANCE),
)


#: Deduplicated by ``(partition_id, epoch_id)`` (:mod:`scenarios.foreach_sink`, mode ``epoch``), the pattern the
#: Programming Guide warns against ("Spark does not guarantee same output for (partitionId, epochId)"): a
#: Real-time Mode batch re-run after a restart ends by the clock, so it reads more or less than the attempt that
#: wrote the pair. Micro-batches replay ``offsets/N`` and hold exactly-once; so it runs in Real-time Mode only.
EPOCH_DEDUP = dataclasses.replace(
    SCENARIO,
    name="kafka_foreach_epoch_dedup",
    summary="Kafka source -> foreach skipping a (partition, epoch) already written, Real-time Mode "
    "(expected: rows lost and duplicated)",
    guarantee="violated",
    attach_sink=foreach_sink("epoch", PROVENANCE),
    triggers=("real-time",),
    default_trigger="real-time:1 second",
    trigger_note="a micro-batch replays offsets/N, where this dedup holds: the pair is Real-time Mode's question",
)


def first_keys(df: DataFrame) -> DataFrame:
    """Each ``key`` once (``dropDuplicates``), as its own column: what survives is the same whichever row of a
    key came first."""
    return df.dropDuplicates(["key"]).select(F.col("key"))


#: The stateful form: RocksDB with checkpoint format 2, which Real-time Mode documents for stateful operators.
DEDUP = dataclasses.replace(
    SCENARIO,
    name="kafka_foreach_dedup",
    summary="Kafka source -> dropDuplicates(key) -> foreach upsert by key, RocksDB v2 (expected: exactly-once)",
    guarantee="exactly-once",
    transform=first_keys,
    identity=("key",),
    attach_sink=foreach_sink("upsert", ("key",)),
    stateful=True,
    state_stores=("rocksdb", "rocksdb-changelog"),
    confs={
        **REAL_TIME_CONFS,
        "spark.sql.streaming.stateStore.providerClass": (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        ),
        "spark.sql.streaming.stateStore.checkpointFormatVersion": "2",
    },
)
