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

The Delta rows cite the *Delta Lake documentation* (``docs/src/content/docs/`` in delta-io/delta,
https://docs.delta.io/latest/): page "Table streaming reads and writes", section "Delta table as a sink" ("The
transaction log enables Delta Lake to guarantee exactly-once processing, even when there are other streams or
batch queries running concurrently against the table.") and section "Idempotent table writes in
``foreachBatch``" (without them "rerunning a failed batch could result in duplicate data writes"; with the
``DataFrameWriter`` options ``txnAppId``/``txnVersion`` "Delta table uses the combination of txnAppId and
txnVersion to identify duplicate writes and ignore them"); page "Table batch reads and writes", section
"Idempotent writes" (the session confs ``spark.databricks.delta.write.txnAppId``/``txnVersion``, which apply to
INSERT/DELETE/UPDATE/MERGE since delta-io/delta PR #1555); page "Table deletes, updates, and merges", section
"Upsert from streaming queries using ``foreachBatch``", note ("Make sure that your merge statement inside
foreachBatch is idempotent as restarts of the streaming query can apply the operation on the same batch of data
multiple times."). The delta-rs rows cite the *Delta Transaction Protocol* (``PROTOCOL.md``), section
"Transaction Identifiers" (the ``appId``/``version`` pair recorded atomically with the data "enables these
external system to make their writes into a Delta table idempotent"; the writer checks the recorded version and
skips a batch already added) and delta-io/delta-rs issue #2580 (open): delta-rs records a repeated
``app_transaction`` instead of skipping it ("if I make multiple commits with the same app_transaction (same ID
and version), they will all be written"), so the check is the writer's (``DeltaTable.transaction_version``).

The trigger rows cite the Programming Guide's section "Triggers" (same page), the page "Performance Tips",
section "Continuous Processing" (``docs/streaming/performance-tips.md``: "at-least-once fault-tolerance
guarantees"; sinks "Kafka sink", "Memory sink", "Console sink"), the Programming Guide's "Foreach" execution
semantics ("Spark does not guarantee same output for (partitionId, epochId), so deduplication cannot be achieved
with (partitionId, epochId)"), and the page "Real-time Mode" (``docs/streaming/real-time-mode.md`` in
apache/spark master, added by SPARK-57234 for the mode Spark 4.1 shipped undocumented), sections "Fault
Tolerance", "Caveats" and "Supported Queries" (its first version: "supports stateless queries only"; a later one
lists stateful operations "supported since Spark 4.3.0").

The DStream rows cite the Spark Streaming Programming Guide (``docs/streaming-programming-guide.md``), section
"Fault-tolerance Semantics", subsection "Semantics of output operations".

The reference sinks' rows cite this repository's ``docs/reference-sinks.md``.
"No" (not fault-tolerant) is the level ``none`` of :mod:`harness.conformance.guarantees`.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.conformance.guarantees import AT_LEAST_ONCE, EXACTLY_ONCE, NONE

GUIDE = "Structured Streaming Programming Guide, API using Datasets and DataFrames"
KAFKA_GUIDE = "Structured Streaming + Kafka Integration Guide"
DELTA_DOCS = "Delta Lake documentation"
DELTA_STREAMING = f"{DELTA_DOCS}, Table streaming reads and writes"
DELTA_PROTOCOL = "Delta Transaction Protocol > Transaction Identifiers"
DELTA_RS_2580 = "delta-io/delta-rs issue #2580 (open)"
TIPS = "Structured Streaming Programming Guide, Performance Tips"
REAL_TIME = "Structured Streaming, Real-time Mode (apache/spark master)"
REPLAYABLE = "replayable"
DSTREAM_GUIDE = "Spark Streaming Programming Guide > Fault-tolerance Semantics > Semantics of output operations"


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
    "sink:delta": Documented(
        EXACTLY_ONCE,
        "'The transaction log enables Delta Lake to guarantee exactly-once processing, even when there are other "
        "streams or batch queries running concurrently against the table.'",
        f"{DELTA_STREAMING} > Delta table as a sink",
    ),
    "sink:delta-foreachbatch-txn": Documented(
        EXACTLY_ONCE,
        "'Delta tables support the following DataFrameWriter options to make the writes idempotent: txnAppId [...] "
        "txnVersion [...] Delta table uses the combination of txnAppId and txnVersion to identify duplicate writes "
        "and ignore them.'",
        f"{DELTA_STREAMING} > Idempotent table writes in foreachBatch",
    ),
    "sink:delta-foreachbatch-naive": Documented(
        AT_LEAST_ONCE,
        "'foreachBatch does not make those writes idempotent as those write attempts lack the information of "
        "whether the batch is being re-executed or not. For example, rerunning a failed batch could result in "
        "duplicate data writes.'",
        f"{DELTA_STREAMING} > Idempotent table writes in foreachBatch; {GUIDE} > Using Foreach and ForeachBatch (Note)",
    ),
    "sink:delta-merge-session-txn": Documented(
        EXACTLY_ONCE,
        "'You can also configure idempotent writes by setting the Spark session configuration "
        "spark.databricks.delta.write.txnAppId and spark.databricks.delta.write.txnVersion'; the session confs "
        "make INSERT/DELETE/UPDATE/MERGE idempotent (writer options do not reach MERGE)",
        f"{DELTA_DOCS}, Table batch reads and writes > Idempotent writes; delta-io/delta PR #1555",
    ),
    "sink:delta-merge-no-txn": Documented(
        AT_LEAST_ONCE,
        "'Make sure that your merge statement inside foreachBatch is idempotent as restarts of the streaming query "
        "can apply the operation on the same batch of data multiple times.'",
        f"{DELTA_DOCS}, Table deletes, updates, and merges > Upsert from streaming queries using foreachBatch (note)",
    ),
    "sink:deltars-txn": Documented(
        EXACTLY_ONCE,
        "'The atomic recording of this information along with modifications to the table enables these external "
        "system to make their writes into a Delta table idempotent'; delta-rs does not skip a repeated version "
        "itself, so the writer checks transaction_version(app_id) first",
        f"{DELTA_PROTOCOL}; {DELTA_RS_2580}",
    ),
    "sink:deltars-unchecked": Documented(
        AT_LEAST_ONCE,
        "delta-rs does not skip a repeated app transaction: 'if I make multiple commits with the same "
        "app_transaction (same ID and version), they will all be written'",
        DELTA_RS_2580,
    ),
    "trigger:available-now:file": Documented(
        EXACTLY_ONCE,
        "'ensures all available data at the time of execution gets processed before termination. All uncommitted "
        "batches will be processed first.'; File Sink: Yes (exactly-once)",
        f"{GUIDE} > Triggers (Available-now micro-batch); {GUIDE} > Output Sinks (File Sink)",
    ),
    "trigger:available-now:foreachBatch-naive": Documented(
        AT_LEAST_ONCE,
        "'By default, foreachBatch provides only at-least-once write guarantees.'",
        f"{GUIDE} > Triggers (Available-now micro-batch); {GUIDE} > Using Foreach and ForeachBatch (Note)",
    ),
    "trigger:once:file": Documented(
        EXACTLY_ONCE,
        "'execute only one micro-batch to process all the available data and then stop on its own'; File Sink: "
        "Yes (exactly-once)",
        f"{GUIDE} > Triggers (One-time micro-batch); {GUIDE} > Output Sinks (File Sink)",
    ),
    "trigger:processing-time:file": Documented(
        EXACTLY_ONCE,
        "'micro-batches will be kicked off at the user-specified intervals'; File Sink: Yes (exactly-once)",
        f"{GUIDE} > Triggers (Fixed interval micro-batches); {GUIDE} > Output Sinks (File Sink)",
    ),
    "trigger:continuous:rate-kafka": Documented(
        AT_LEAST_ONCE,
        "'any time you switch to continuous mode, you will get at-least-once fault-tolerance guarantees'",
        f"{TIPS} > Continuous Processing",
    ),
    "trigger:continuous:kafka-kafka": Documented(
        AT_LEAST_ONCE,
        "'at-least-once fault-tolerance guarantees'; 'Kafka source: All options are supported.'",
        f"{TIPS} > Continuous Processing (Supported Queries)",
    ),
    "trigger:continuous:foreach": Documented(
        NONE,
        "sinks: 'Kafka sink', 'Memory sink', 'Console sink' (foreach is not among them)",
        f"{TIPS} > Continuous Processing (Supported Queries)",
    ),
    "trigger:continuous:memory": Documented(
        NONE,
        "'Memory sink: Good for debugging.'; Memory Sink: Fault-tolerant: No",
        f"{TIPS} > Continuous Processing (Supported Queries); {GUIDE} > Output Sinks (Memory Sink)",
    ),
    "trigger:continuous:console": Documented(
        NONE,
        "'Console sink: Good for debugging.'; Console Sink: Fault-tolerant: No",
        f"{TIPS} > Continuous Processing (Supported Queries); {GUIDE} > Output Sinks (Console Sink)",
    ),
    "trigger:real-time:kafka-kafka": Documented(
        AT_LEAST_ONCE,
        "'The built-in Kafka sink provides at-least-once delivery, with or without Real-time Mode.'",
        f"{REAL_TIME} > Fault Tolerance",
    ),
    "trigger:real-time:foreach": Documented(
        AT_LEAST_ONCE,
        "'exactly-once processing semantics, but sinks may receive duplicate records after a failure'; Foreach "
        "Sink: Yes (at-least-once)",
        f"{REAL_TIME} > Caveats; {GUIDE} > Output Sinks (Foreach Sink)",
    ),
    "trigger:real-time:foreach-upsert": Documented(
        EXACTLY_ONCE,
        "'the same exactly-once processing guarantees as the default micro-batch engine' (a writer idempotent by row)",
        f"{REAL_TIME} > Fault Tolerance",
    ),
    "trigger:real-time:foreach-epoch-dedup": Documented(
        NONE,
        "'Spark does not guarantee same output for (partitionId, epochId), so deduplication cannot be achieved "
        "with (partitionId, epochId).'",
        f"{GUIDE} > Using Foreach and ForeachBatch (Foreach, Execution semantics)",
    ),
    "trigger:real-time:dedup": Documented(
        NONE,
        "'supports stateless queries only' (stateful operations 'supported since Spark 4.3.0')",
        f"{REAL_TIME} > Supported Queries",
    ),
    "dstream:foreachRDD-naive": Documented(
        AT_LEAST_ONCE,
        "'Output operations (like foreachRDD) have at-least-once semantics, that is, the transformed data may get "
        "written to an external entity more than once in the event of a worker failure.'",
        DSTREAM_GUIDE,
    ),
    "dstream:foreachRDD-idempotent": Documented(
        EXACTLY_ONCE,
        "'Idempotent updates: Multiple attempts always write the same data.'; 'Use the batch time (available in "
        "foreachRDD) and the partition index of the RDD to create an identifier.'",
        DSTREAM_GUIDE,
    ),
    "dstream:saveAsTextFiles": Documented(
        EXACTLY_ONCE,
        "'acceptable for saving to file systems using the saveAs***Files operations (as the file will simply get "
        "overwritten with the same data)'",
        DSTREAM_GUIDE,
    ),
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
