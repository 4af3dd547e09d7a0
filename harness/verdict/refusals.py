"""Which programming-guide row a refused restart enforces, read from Spark's error message.

Sources, read for Spark 4.2.0: :data:`ERROR_CLASSES` from ``error/error-conditions.json`` of the spark-common-utils
jar, each class checked against the spark-sql / spark-catalyst classes that raise it; :data:`MESSAGE_PATTERNS`: the
one refusal raised without a class (``OffsetSeqBase.toStreamProgress``'s assertion). Contracts:

- :func:`error_class` skips the ``STREAM_FAILED`` wrapper a ``StreamingQueryException`` puts first.
- :func:`refusal_rule` takes the first class in the message that :data:`ERROR_CLASSES` maps (``CLASS.SUB`` before
  ``CLASS``), then :data:`MESSAGE_PATTERNS`, else ``None``.
- Pure: no Spark, no I/O.
"""

from __future__ import annotations

import re

from harness.verdict.guide import GuideRow, row

#: Error class (or ``CLASS.SUB``) of a refused restart -> the id of the row it enforces.
ERROR_CLASSES: dict[str, str] = {
    # StateSchemaCompatibilityChecker.check: the state's key or (without evolution) value schema changed. The
    # message names no operator: grouping keys, aggregates, dedup columns, join schema, user state alike.
    "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE": "stateful-schema",
    "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE": "stateful-schema",
    # IncrementalExecution.checkOperatorValidWithMetadata: the operators differ from the checkpoint's state metadata.
    "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA": "stateful-add-remove",
    # "... the streaming query was previously run without stateful operators but restarted with stateful operators."
    "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY": "stateful-add-remove",
    # "If the stream job is restarted with a new or updated state operation, please create a new checkpoint ..."
    "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE": "stateful-add-remove",
    # transformWithState with Avro encoding: Avro's canRead check failed against an older value schema.
    "STATE_STORE_INVALID_VALUE_SCHEMA_EVOLUTION": "tws-value-schema-breaking",
    "STATE_STORE_VALUE_SCHEMA_EVOLUTION_THRESHOLD_EXCEEDED": "tws-evolution-limit",
    "STATE_STORE_STATE_SCHEMA_FILES_THRESHOLD_EXCEEDED": "tws-evolution-limit",
    "STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE": "tws-variable-type",
    # Raised only by TransformWithStateOperatorProperties.validateOperatorProperties (timeMode, outputMode).
    "STATE_STORE_INVALID_CONFIG_AFTER_RESTART": "tws-modes",
    # Source evolution's naming rules, checked at analysis (QueryCompilationErrors), before any batch runs.
    "STREAMING_QUERY_EVOLUTION_ERROR.UNNAMED_STREAMING_SOURCES_WITH_ENFORCEMENT": "source-named",
    "STREAMING_QUERY_EVOLUTION_ERROR.DUPLICATE_SOURCE_NAMES": "source-named",
    "STREAMING_QUERY_EVOLUTION_ERROR.INVALID_SOURCE_NAME": "source-named",
    "STREAMING_QUERY_EVOLUTION_ERROR.SOURCE_NAMING_NOT_SUPPORTED": "source-named",
    # 4.2.0's offline state repartition (the only way to change a stateful query's partitions) left unfinished.
    "STREAMING_UNFINISHED_REPARTITION_DETECTED": "conf-shuffle-partitions",
}

#: Refusals Spark raises without an error class (a Scala ``assert``, "assertion failed: ..."), by message.
MESSAGE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # OffsetSeqBase.toStreamProgress (checkpointing/OffsetSeq.scala), for positional (unnamed) sources.
    (
        re.compile(
            r"There are \[\d+\] sources in the checkpoint offsets and now there are \[\d+\] sources requested by"
            r" the query"
        ),
        "source-count",
    ),
)

#: Classes that wrap the real one: StreamExecution fails a query with STREAM_FAILED around its cause's message.
WRAPPER_CLASSES = frozenset({"STREAM_FAILED"})

# "[CLASS] ..." or "[CLASS.SUB] ...", at the start or after whitespace ("terminated with exception: [CLASS] ...").
_CLASS = re.compile(r"(?:^|(?<=\s))\[(_?[A-Z][A-Z0-9_]*)(?:\.([A-Z][A-Z0-9_]*))?\]", re.MULTILINE)


def error_classes(message: str) -> tuple[tuple[str, str | None], ...]:
    """Every ``(class, sub-class or None)`` in ``message``, in order."""
    return tuple((m.group(1), m.group(2)) for m in _CLASS.finditer(message))


def error_class_and_sub(message: str) -> tuple[str, str | None] | None:
    """The first ``(class, sub-class or None)`` in ``message`` that is not a wrapper (the wrapper when it is the
    only one); ``None`` when the message has no class."""
    found = error_classes(message)
    inner = [c for c in found if c[0] not in WRAPPER_CLASSES]
    if inner:
        return inner[0]
    return found[0] if found else None


def error_class(message: str) -> str | None:
    """The top-level error class of ``message`` (``STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE``, not the wrapping
    ``STREAM_FAILED``); ``None`` when the message has no ``[CLASS]``."""
    found = error_class_and_sub(message)
    return found[0] if found else None


def refusal_rule(message: str) -> GuideRow | None:
    """The row a refused restart's ``message`` enforces: by its first mapped error class, else by a message
    pattern; ``None`` when neither names one."""
    for cls, sub in error_classes(message):
        rule = ERROR_CLASSES.get(f"{cls}.{sub}") if sub else None
        rule = rule or ERROR_CLASSES.get(cls)
        if rule:
            return row(rule)
    for pattern, rule in MESSAGE_PATTERNS:
        if pattern.search(message):
            return row(rule)
    return None
