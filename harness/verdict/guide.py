"""Which changes to a streaming query may resume over its checkpoint, and which Spark error refuses the rest.

Sources, read for Spark 4.2.0 (the pinned pyspark):

- :data:`GUIDE_ROWS`: the Structured Streaming Programming Guide, section "Recovery Semantics after Changes in a
  Streaming Query" (``docs/streaming/apis-on-dataframes-and-datasets.md`` in apache/spark; Spark 3.x kept it in
  ``docs/structured-streaming-programming-guide.md``, same text), one row per bullet or example, plus the
  ``conf-*`` rows from ``docs/streaming/additional-information.md`` ("Miscellaneous Notes").
- :data:`SPARK4_ROWS`: rules the section does not list: ``transformWithState`` state schema evolution
  (``docs/streaming/structured-streaming-transform-with-state.md``, "State Schema Evolution") and the checks that
  enforce it, and named sources (``DataStreamReader.name()``, new in 4.2.0; the doc of
  ``spark.sql.streaming.queryEvolution.enableSourceEvolution`` in the 4.2.0 spark-catalyst jar).

Contracts:

- ``category`` is one of :data:`CATEGORIES`, the guide's own words. ``allowed`` means Spark resumes; whether the
  result is right still depends on the query and the change (the guide says so of every ``allowed``).
- ``says`` quotes the source (shortened only with ``...``); ``change`` is a noun phrase that reads before
  "is <category>".
- Many ``not allowed`` rows raise nothing: Spark resumes and the output is wrong or unpredictable. A refusal names
  the general row when the error cannot tell which operator changed (a key schema error is ``stateful-schema``,
  never ``agg-keys``).
- The Spark errors that enforce a row are in :mod:`harness.verdict.refusals`.
- Pure data: no Spark, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ALLOWED",
    "CATEGORIES",
    "CONDITIONAL",
    "GUIDE_ROWS",
    "NOT_ALLOWED",
    "NOT_WELL_DEFINED",
    "ROWS",
    "SPARK4_ROWS",
    "GuideRow",
    "row",
]

ALLOWED = "allowed"
NOT_ALLOWED = "not allowed"
#: The guide's intro says "the effect of the change is not well-defined"; its join bullet says "ill-defined".
NOT_WELL_DEFINED = "not well-defined"
#: "Changes in projections with different output schema are conditionally allowed".
CONDITIONAL = "conditionally allowed"
CATEGORIES = (ALLOWED, NOT_ALLOWED, NOT_WELL_DEFINED, CONDITIONAL)


@dataclass(frozen=True)
class GuideRow:
    """One rule: ``change`` (a noun phrase) is ``category``, as the source ``says``."""

    id: str
    change: str
    category: str
    says: str


_STATEFUL = (
    "any changes (that is, additions, deletions, or schema modifications) to the stateful operations of a streaming"
    " query are not allowed between restarts"
)
_AGG = "Any change in number or type of grouping keys or aggregates is not allowed."
_FMGWS = "Any change to the schema of the user-defined state and the type of timeout is not allowed."
_CONFS = (
    "Several configurations are not modifiable after the query has run. To change them, discard the checkpoint"
    " and start a new query."
)

GUIDE_ROWS: tuple[GuideRow, ...] = (
    # Input sources.
    GuideRow(
        "source-count",
        "a change in the number of input sources",
        NOT_ALLOWED,
        "Changes in the number or type (i.e. different source) of input sources: This is not allowed.",
    ),
    GuideRow(
        "source-type",
        "replacing an input source with a different source",
        NOT_ALLOWED,
        "Changes in the number or type (i.e. different source) of input sources: This is not allowed.",
    ),
    GuideRow(
        "source-rate-limit",
        "adding, removing or modifying a source's rate limit (maxOffsetsPerTrigger)",
        ALLOWED,
        "Addition/deletion/modification of rate limits is allowed",
    ),
    GuideRow(
        "source-subscribed-topics",
        "a change to the subscribed topics or files of a source",
        NOT_ALLOWED,
        "Changes to subscribed topics/files are generally not allowed as the results are unpredictable",
    ),
    # Output sinks: type, then parameters.
    GuideRow(
        "sink-file-to-kafka",
        "changing a file sink to a Kafka sink",
        ALLOWED,
        "File sink to Kafka sink is allowed. Kafka will see only the new data.",
    ),
    GuideRow(
        "sink-kafka-to-file",
        "changing a Kafka sink to a file sink",
        NOT_ALLOWED,
        "Kafka sink to file sink is not allowed.",
    ),
    GuideRow(
        "sink-kafka-foreach",
        "changing a Kafka sink to foreach, or foreach to Kafka",
        ALLOWED,
        "Kafka sink changed to foreach, or vice versa is allowed.",
    ),
    GuideRow(
        "sink-file-path",
        "a change to a file sink's output directory",
        NOT_ALLOWED,
        "Changes to output directory of a file sink are not allowed",
    ),
    GuideRow(
        "sink-kafka-topic", "a change to a Kafka sink's output topic", ALLOWED, "Changes to output topic are allowed"
    ),
    GuideRow(
        "sink-foreach-code",
        "a change to a foreach sink's ForeachWriter code",
        ALLOWED,
        "Changes to the user-defined foreach sink (that is, the `ForeachWriter` code) are allowed, but the"
        " semantics of the change depends on the code.",
    ),
    # Projection / filter / map-like operations.
    GuideRow("filter", "adding or removing a filter", ALLOWED, "Addition / deletion of filters is allowed"),
    GuideRow(
        "projection-same-schema",
        "a change in a projection that keeps its output schema",
        ALLOWED,
        "Changes in projections with same output schema are allowed",
    ),
    GuideRow(
        "projection-new-schema",
        "a change in a projection to a different output schema",
        CONDITIONAL,
        "Changes in projections with different output schema are conditionally allowed: ... allowed only if"
        " the output sink allows the schema change",
    ),
    # Stateful operations: the section's general rule, then one row per operator's example.
    GuideRow("stateful-add-remove", "adding or removing a stateful operation", NOT_ALLOWED, _STATEFUL),
    GuideRow("stateful-schema", "a change to the schema of a stateful operation's state", NOT_ALLOWED, _STATEFUL),
    GuideRow(
        "agg-keys", "a change in the number or type of a streaming aggregation's grouping keys", NOT_ALLOWED, _AGG
    ),
    GuideRow(
        "agg-functions", "a change in the number or type of a streaming aggregation's aggregates", NOT_ALLOWED, _AGG
    ),
    GuideRow(
        "dedup-columns",
        "a change in the number or type of streaming deduplication's columns",
        NOT_ALLOWED,
        "Any change in number or type of deduplicating columns is not allowed.",
    ),
    GuideRow(
        "join-schema",
        "a change in a stream-stream join's schema or equi-joining columns",
        NOT_ALLOWED,
        "Changes in the schema or equi-joining columns are not allowed.",
    ),
    GuideRow(
        "join-type",
        "a change in a stream-stream join's type (outer or inner)",
        NOT_ALLOWED,
        "Changes in join type (outer or inner) are not allowed.",
    ),
    GuideRow(
        "join-condition",
        "another change in a stream-stream join's condition",
        NOT_WELL_DEFINED,
        "Other changes in the join condition are ill-defined.",
    ),
    GuideRow(
        "fmgws-schema", "a change to the schema of [flat]mapGroupsWithState's user-defined state", NOT_ALLOWED, _FMGWS
    ),
    # The guide forbids a timeout change too: "the schema ... and the type of timeout is not allowed".
    GuideRow("fmgws-timeout", "a change to [flat]mapGroupsWithState's timeout type", NOT_ALLOWED, _FMGWS),
    GuideRow(
        "fmgws-function",
        "a change within [flat]mapGroupsWithState's state-mapping function",
        ALLOWED,
        "Any change within the user-defined state-mapping function are allowed, but the semantic effect of"
        " the change depends on the user-defined logic.",
    ),
    GuideRow(
        "fmgws-encoded-state",
        "a change to the schema of state the user keeps as Avro-encoded bytes",
        ALLOWED,
        "if you save your state as Avro-encoded bytes, then you are free to change the"
        " Avro-state-schema between query restarts",
    ),
    # additional-information.md, "Miscellaneous Notes". Spark refuses none of them: the offset log records these
    # confs and OffsetSeqMetadata.setSessionConf puts the checkpoint's value back (with a warning), so the change
    # is silently ignored.
    GuideRow(
        "conf-shuffle-partitions",
        "a change to spark.sql.shuffle.partitions",
        NOT_ALLOWED,
        _CONFS + " ... state is partitioned via applying hash function to key, hence the number of partitions"
        " for state should be unchanged.",
    ),
    GuideRow(
        "conf-state-store-provider",
        "a change to spark.sql.streaming.stateStore.providerClass",
        NOT_ALLOWED,
        _CONFS + " ... the class of state store provider should be unchanged.",
    ),
    GuideRow(
        "conf-watermark-policy",
        "a change to spark.sql.streaming.multipleWatermarkPolicy",
        NOT_ALLOWED,
        _CONFS + " ... the policy should be unchanged.",
    ),
)

SPARK4_ROWS: tuple[GuideRow, ...] = (
    # structured-streaming-transform-with-state.md, "State Schema Evolution".
    GuideRow(
        "tws-state-variables",
        "adding or removing a transformWithState state variable",
        ALLOWED,
        "This operator allows for state variables to be added and removed across different runs of the same"
        " streaming query.",
    ),
    # Avro only: spark.sql.streaming.stateStore.encodingFormat=avro. The offset log records the format, so a
    # checkpoint begun with the default (unsaferow) keeps it; only transformWithState sets
    # schemaEvolutionEnabledForOperator (SchemaValidationUtils), every other operator faces stateful-schema.
    GuideRow(
        "tws-value-schema-evolution",
        "adding, removing, widening or reordering fields of a transformWithState state variable's value",
        CONDITIONAL,
        "We support such schema evolution only when the underlying encoding format is set to `Avro`.",
    ),
    GuideRow(
        "tws-value-schema-breaking",
        "renaming a field or narrowing a type in a transformWithState state value",
        NOT_ALLOWED,
        "The following evolution operations are not supported: ... Renaming a field ... Type narrowing",
    ),
    GuideRow(
        "tws-key-schema",
        "a change to a transformWithState state key schema",
        NOT_ALLOWED,
        "Note that schema evolution is only supported on the value side. Key side state schema evolution is"
        " not supported.",
    ),
    # From here on, the error conditions' own text (TransformWithStateOperatorProperties.validateOperatorProperties
    # and StateSchemaCompatibilityChecker raise them).
    GuideRow(
        "tws-variable-type",
        "changing a transformWithState state variable's kind (value, list, map)",
        NOT_ALLOWED,
        "Cannot change <stateVarName> to <newType> between query restarts.",
    ),
    GuideRow(
        "tws-modes",
        "changing a transformWithState's timeMode or outputMode",
        NOT_ALLOWED,
        "Cannot change <configName> from <oldConfig> to <newConfig> between restarts.",
    ),
    # The files threshold's message names 'spark.sql.streaming.stateStore.stateSchemaFilesThreshold'; the 4.2.0
    # conf is spark.sql.streaming.stateStore.maxNumStateSchemaFiles.
    GuideRow(
        "tws-evolution-limit",
        "evolving a transformWithState state schema more times than the store's thresholds allow",
        NOT_ALLOWED,
        "Please set 'spark.sql.streaming.stateStore.valueStateSchemaEvolutionThreshold' to a"
        " higher number, or revert state schema modifications",
    ),
    # Spark 4.2.0: DataStreamReader.name(); the conf's doc in SQLConf. Spark's own tests of name() also set
    # spark.sql.streaming.offsetLog.formatVersion=2. Without the conf, sources are still matched by position.
    GuideRow(
        "source-named",
        "adding, removing or reordering sources named with DataStreamReader.name()"
        " (spark.sql.streaming.queryEvolution.enableSourceEvolution)",
        CONDITIONAL,
        "When true, enforces that all streaming sources must be explicitly named via the .name()"
        " API. This enables streaming source evolution, allowing sources to be added, removed, or reordered"
        " without losing state.",
    ),
)

ROWS: tuple[GuideRow, ...] = GUIDE_ROWS + SPARK4_ROWS
_BY_ID = {r.id: r for r in ROWS}


def row(id: str) -> GuideRow:
    """The row ``id``; ``KeyError`` naming every id when there is none."""
    try:
        return _BY_ID[id]
    except KeyError:
        raise KeyError(f"no guide row {id!r}; rows: {', '.join(_BY_ID)}") from None
