"""What the documentation says each source and sink guarantees (data, with citations).

Source of the Spark rows: the *Structured Streaming Programming Guide*, page
"API using Datasets and DataFrames" (``docs/streaming/apis-on-dataframes-and-datasets.md``
in apache/spark, https://spark.apache.org/docs/latest/streaming/apis-on-dataframes-and-datasets.html):

- section "Input Sources", the sources table, column "Fault-tolerant": File
  source "Yes", Rate Source "Yes", Rate Per Micro-Batch Source "Yes", Kafka
  Source "Yes" (Socket "No"); the section says non-fault-tolerant sources "do
  not guarantee that data can be replayed using checkpointed offsets after a
  failure", so "Yes" means *replayable*;
- section "Output Sinks", the sinks table, column "Fault-tolerant": File Sink
  "Yes (exactly-once)", Kafka Sink "Yes (at-least-once)", Foreach Sink "Yes
  (at-least-once)", ForeachBatch Sink "Depends on the implementation", Console
  Sink "No", Memory Sink "No. But in Complete Mode, restarted query will
  recreate the full table.";
- section "Using Foreach and ForeachBatch", ForeachBatch, **Note**: "By default,
  foreachBatch provides only at-least-once write guarantees. However, you can
  use the batchId provided to the function as way to deduplicate the output
  and get an exactly-once guarantee."

The Kafka sink's row also cites the *Structured Streaming + Kafka Integration
Guide* (``docs/streaming/structured-streaming-kafka-integration.md`` in
apache/spark, https://spark.apache.org/docs/latest/streaming/structured-streaming-kafka-integration.html),
section "Writing Data to Kafka": "Take note that Apache Kafka only supports at
least once write semantics. Consequently, when writing---either Streaming
Queries or Batch Queries---to Kafka, some records may be duplicated; [...]
Structured Streaming cannot prevent such duplicates from occurring due to these
Kafka write semantics."

The reference sinks' rows cite this repository's ``docs/reference-sinks.md``.
"No" (not fault-tolerant) is the level ``none`` of :mod:`harness.conformance.guarantees`.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.conformance.guarantees import AT_LEAST_ONCE, EXACTLY_ONCE, NONE

GUIDE = "Structured Streaming Programming Guide, API using Datasets and DataFrames"
KAFKA_GUIDE = "Structured Streaming + Kafka Integration Guide"
REPLAYABLE = "replayable"


@dataclass(frozen=True)
class Documented:
    """``level``: ``replayable`` (sources) or a guarantee level (sinks); ``quote``: the
    documentation's words; ``where``: the section it is from."""

    level: str
    quote: str
    where: str


DOCUMENTED: dict[str, Documented] = {
    "source:rate": Documented(REPLAYABLE, "Fault-tolerant: Yes", f"{GUIDE} > Input Sources (Rate Source)"),
    "source:rate-micro-batch": Documented(
        REPLAYABLE, "Fault-tolerant: Yes", f"{GUIDE} > Input Sources (Rate Per Micro-Batch Source)"
    ),
    "source:file": Documented(REPLAYABLE, "Fault-tolerant: Yes", f"{GUIDE} > Input Sources (File source)"),
    "source:kafka": Documented(REPLAYABLE, "Fault-tolerant: Yes", f"{GUIDE} > Input Sources (Kafka Source)"),
    "sink:file": Documented(EXACTLY_ONCE, "Fault-tolerant: Yes (exactly-once)", f"{GUIDE} > Output Sinks (File Sink)"),
    "sink:kafka": Documented(
        AT_LEAST_ONCE,
        "Fault-tolerant: Yes (at-least-once); 'Apache Kafka only supports at least once write semantics. "
        "Consequently, when writing---either Streaming Queries or Batch Queries---to Kafka, some records may be "
        "duplicated'",
        f"{GUIDE} > Output Sinks (Kafka Sink); {KAFKA_GUIDE} > Writing Data to Kafka",
    ),
    "sink:foreach": Documented(
        AT_LEAST_ONCE, "Fault-tolerant: Yes (at-least-once)", f"{GUIDE} > Output Sinks (Foreach Sink)"
    ),
    "sink:foreachBatch-naive": Documented(
        AT_LEAST_ONCE,
        "Depends on the implementation; 'By default, foreachBatch provides only at-least-once write guarantees.'",
        f"{GUIDE} > Output Sinks (ForeachBatch Sink) and Using Foreach and ForeachBatch (Note)",
    ),
    "sink:foreachBatch-idempotent": Documented(
        EXACTLY_ONCE,
        "Depends on the implementation; 'you can use the batchId provided to the function as way to "
        "deduplicate the output and get an exactly-once guarantee.'",
        f"{GUIDE} > Output Sinks (ForeachBatch Sink) and Using Foreach and ForeachBatch (Note)",
    ),
    "sink:memory": Documented(
        NONE,
        "Fault-tolerant: No. But in Complete Mode, restarted query will recreate the full table.",
        f"{GUIDE} > Output Sinks (Memory Sink)",
    ),
    "sink:console": Documented(NONE, "Fault-tolerant: No", f"{GUIDE} > Output Sinks (Console Sink)"),
    "reference:transactional-files": Documented(
        EXACTLY_ONCE, "exactly-once", "docs/reference-sinks.md (TransactionalFileSink)"
    ),
    "reference:publish-in-write": Documented(
        AT_LEAST_ONCE, "at-least-once (the bug to avoid)", "docs/reference-sinks.md (PublishInWriteSink)"
    ),
    "reference:postgres-upsert": Documented(
        EXACTLY_ONCE, "exactly-once", "docs/reference-sinks.md (upsert_into_postgres)"
    ),
}
