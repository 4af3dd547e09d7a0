"""Certify's trigger rows: the built-in sinks each trigger supports, measured under kills in that trigger.

Micro-batch triggers (scheduled ``availableNow`` and ``once`` jobs, a processing-time clock) kill at named points
of batches 0 and 1, as the sink rows do; ``once`` and ``availableNow`` rows run each round as one job, so a
killed job is over and the next goes on. Epoch triggers (continuous processing, Real-time Mode) kill at epochs
the rounds surely reach (:mod:`harness.engine.epochs`): at ``offsets/N`` and ``commits/N`` (the checkpoint
watcher), a timed kill inside an epoch, and inside a ``foreach`` writer. Every row names the scenario it runs
(``docs/triggers.md``); what the documentation states is in :mod:`.documented`.
"""

from __future__ import annotations

from harness.conformance.certify.runs import Row, kafka_missing

KF = "scenarios.library.kafka_foreach"
CS = "harness.conformance.certify.scenarios"
#: Kills of the Real-time Mode ``foreach`` rows: inside the writer (partition 0 of batch 4, after one row), and
#: after ``offsets/7`` (the batch's rows written, its commit not).
FOREACH_KILLS = ("sink.write.mid:4:0:1", "after_offsets_logged:7")

TRIGGER_ROWS: tuple[Row, ...] = (
    Row(
        "trigger:available-now:file",
        "trigger",
        "availableNow jobs -> file sink",
        ("sink.write.end", "after_commit_logged"),
        "file_sink_stateless",
        trigger="available-now",
    ),
    Row(
        "trigger:available-now:foreachBatch-naive",
        "trigger",
        "availableNow jobs -> foreachBatch, appending",
        ("sink.write.end", "sink.commit.after"),
        "foreachbatch_append_naive",
        trigger="available-now",
    ),
    Row(
        "trigger:once:file",
        "trigger",
        "once jobs -> file sink",
        ("sink.write.end", "after_commit_logged"),
        "file_sink_stateless",
        trigger="once",
    ),
    Row(
        "trigger:processing-time:file",
        "trigger",
        "processing-time 500 ms -> file sink",
        ("sink.write.mid", "after_commit_logged"),
        "file_sink_stateless",
        trigger="processing-time:500 milliseconds",
    ),
    Row(
        "trigger:continuous:rate-kafka",
        "trigger",
        "continuous: rate -> Kafka sink",
        ("after_offsets_logged", "batch.time"),
        "rate_continuous",
        needs=kafka_missing,
        kafka=True,
        kills=("after_offsets_logged:2", "batch.time:5:500"),
    ),
    Row(
        "trigger:continuous:kafka-kafka",
        "trigger",
        "continuous: Kafka -> Kafka sink",
        ("batch.time",),
        "kafka_to_kafka",
        needs=kafka_missing,
        kafka=True,
        trigger="continuous:1 second",
        kills=("batch.time:1:500", "batch.time:4:500"),
    ),
    Row(
        "trigger:continuous:foreach",
        "trigger",
        "continuous: rate -> Python foreach",
        ("after_offsets_logged",),
        "scenarios.library.rate_continuous:FOREACH",
        kills=("after_offsets_logged:2",),
    ),
    Row(
        "trigger:continuous:memory",
        "trigger",
        "continuous: rate -> memory sink",
        ("after_offsets_logged",),
        f"{CS}:CONTINUOUS_MEMORY",
        kills=("after_offsets_logged:2",),
    ),
    Row(
        "trigger:continuous:console",
        "trigger",
        "continuous: rate -> console sink",
        ("after_offsets_logged",),
        f"{CS}:CONTINUOUS_CONSOLE",
        kills=("after_offsets_logged:2",),
    ),
    Row(
        "trigger:real-time:kafka-kafka",
        "trigger",
        "Real-time Mode: Kafka -> Kafka sink",
        ("after_offsets_logged", "batch.time"),
        "kafka_to_kafka",
        needs=kafka_missing,
        kafka=True,
        trigger="real-time:1 second",
        kills=("after_offsets_logged:2", "batch.time:4:500"),
    ),
    Row(
        "trigger:real-time:foreach",
        "trigger",
        "Real-time Mode: Kafka -> Python foreach, appending",
        ("sink.write.mid", "after_offsets_logged"),
        "kafka_foreach",
        needs=kafka_missing,
        kafka=True,
        trigger="real-time:1 second",
        kills=FOREACH_KILLS,
    ),
    Row(
        "trigger:real-time:foreach-upsert",
        "trigger",
        "Real-time Mode: Kafka -> Python foreach, idempotent by row",
        ("sink.write.mid", "after_offsets_logged"),
        f"{KF}:UPSERT",
        needs=kafka_missing,
        kafka=True,
        trigger="real-time:1 second",
        kills=FOREACH_KILLS,
    ),
    Row(
        "trigger:real-time:foreach-epoch-dedup",
        "trigger",
        "Real-time Mode: Kafka -> Python foreach, dedup by (partition, epoch)",
        ("sink.write.end", "after_offsets_logged"),
        f"{KF}:EPOCH_DEDUP",
        needs=kafka_missing,
        kafka=True,
        kills=("sink.write.end:4", "after_offsets_logged:7"),
    ),
    Row(
        "trigger:real-time:dedup",
        "trigger",
        "Real-time Mode: Kafka -> dropDuplicates (RocksDB v2) -> foreach",
        ("after_offsets_logged",),
        f"{KF}:DEDUP",
        needs=kafka_missing,
        kafka=True,
        trigger="real-time:1 second",
        kills=("after_offsets_logged:2",),
    ),
)
