"""harness.verdict.guide and .refusals: the programming guide's rows and the Spark errors that enforce them."""

from __future__ import annotations

import re

import pytest

from harness.verdict import guide
from harness.verdict.guide import CATEGORIES, NOT_ALLOWED, ROWS, row
from harness.verdict.refusals import (
    ERROR_CLASSES,
    MESSAGE_PATTERNS,
    error_class,
    error_class_and_sub,
    error_classes,
    refusal_rule,
)

pytestmark = pytest.mark.unit

# A PySpark 4.2.0 StreamingQueryException's message for a grouping key added over a live checkpoint (an upgrade
# run of scenarios.library.upgrade_agg_key): STREAM_FAILED wraps the refusal's own class.
KEY_SCHEMA_WRAPPED = (
    "[STREAM_FAILED] Query [id = 67d0267a-3856-499b-9d78-c3b7ec353460, runId = 63b5b272-f362-4813-a252-62bf0f495545]"
    " terminated with exception: [STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE] Provided key schema does not match existing"
    " state key schema.\nPlease check number and type of fields.\nExisting key_schema=StructType(StructField(window,"
    "StructType(StructField(start,TimestampType,true),StructField(end,TimestampType,true)),false),StructField(key,"
    "IntegerType,true)) and new key_schema=StructType(StructField(window,StructType(StructField(start,TimestampType,"
    "true),StructField(end,TimestampType,true)),false),StructField(key,IntegerType,true),StructField("
    "_groupingexpression,IntegerType,true)).\nIf you want to force running the query without schema validation,"
    " please set spark.sql.streaming.stateStore.stateSchemaCheck to false.\nHowever, please note that running the"
    " query with incompatible schema could cause non-deterministic behavior. SQLSTATE: XXKST SQLSTATE: XXKST"
)
# The JVM's own line for the same error (driver log): the exception class, then the message.
KEY_SCHEMA_JVM = (
    "org.apache.spark.sql.execution.streaming.state.StateStoreKeySchemaNotCompatible:"
    " [STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE] Provided key schema does not match existing state key schema."
)
# Shapes built from error-conditions.json (spark-common-utils 4.2.0) the way Spark renders them.
VALUE_SCHEMA = (
    "[STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE] Provided value schema does not match existing state value schema.\n"
    "Please check number and type of fields.\nExisting value_schema=StructType(StructField(sum,LongType,true)) and"
    " new value_schema=StructType(StructField(sum,DoubleType,true)). SQLSTATE: XXKST"
)
OPERATOR_MISMATCH = (
    "[STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA] Streaming stateful operator name does not match with"
    " the operator in state metadata. This likely to happen when user adds/removes/changes stateful operator of"
    " existing streaming query.\nStateful operators in the metadata: [(0 -> stateStoreSave)]; Stateful operators in"
    " current batch: [(0 -> dedupe)]. SQLSTATE: 42K03"
)
STATE_FILE = (
    "[CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE] An error occurred during loading state. Error reading"
    " streaming state file of /ckpt/state/0/0/1.changelog does not exist. If the stream job is restarted with a new"
    " or updated state operation, please create a new checkpoint location or clear the existing checkpoint location."
    " SQLSTATE: 58030"
)
UNNAMED_SOURCES = (
    "[STREAMING_QUERY_EVOLUTION_ERROR.UNNAMED_STREAMING_SOURCES_WITH_ENFORCEMENT] Streaming query evolution error:"
    " All streaming sources must be named when spark.sql.streaming.queryEvolution.enableSourceEvolution is enabled."
    " Unnamed sources found: rate. Use the name() method to assign names to all streaming sources. SQLSTATE: 42KDE"
)
# OffsetSeqBase.toStreamProgress's assert: no error class of its own, only the wrapper's.
SOURCE_COUNT = (
    "[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: assertion failed: There are [1] sources in"
    " the checkpoint offsets and now there are [2] sources requested by the query. Cannot continue. SQLSTATE: XXKST"
)


def test_ids_are_unique_kebab_case_and_categories_known() -> None:
    ids = [r.id for r in ROWS]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids)
    assert all(r.category in CATEGORIES for r in ROWS)
    assert all(r.change and r.says for r in ROWS)


def test_every_mapped_error_and_pattern_names_a_row() -> None:
    ids = {r.id for r in ROWS}
    assert set(ERROR_CLASSES.values()) <= ids
    assert {rule for _, rule in MESSAGE_PATTERNS} <= ids
    assert all(re.fullmatch(r"[A-Z_]+(\.[A-Z_]+)?", k) for k in ERROR_CLASSES)


def test_refusals_enforce_rules_that_forbid() -> None:
    """A refusal never names a row the guide calls allowed outright."""
    for rule in list(ERROR_CLASSES.values()) + [r for _, r in MESSAGE_PATTERNS]:
        assert row(rule).category != guide.ALLOWED, rule


def test_the_guide_rows_the_brief_named() -> None:
    assert row("source-count").category == NOT_ALLOWED
    assert row("source-rate-limit").category == guide.ALLOWED
    assert row("sink-kafka-to-file").category == NOT_ALLOWED
    assert row("sink-file-to-kafka").category == guide.ALLOWED
    assert row("projection-new-schema").category == guide.CONDITIONAL
    assert row("join-condition").category == guide.NOT_WELL_DEFINED
    # "Any change to the schema of the user-defined state and the type of timeout is not allowed."
    assert row("fmgws-timeout").category == NOT_ALLOWED
    assert row("tws-value-schema-evolution").category == guide.CONDITIONAL


def test_error_class_looks_past_the_stream_failed_wrapper() -> None:
    assert error_class(KEY_SCHEMA_WRAPPED) == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
    assert error_classes(KEY_SCHEMA_WRAPPED) == (
        ("STREAM_FAILED", None),
        ("STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE", None),
    )
    assert error_class(KEY_SCHEMA_JVM) == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
    assert error_class(VALUE_SCHEMA) == "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"
    assert error_class(OPERATOR_MISMATCH) == "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"
    # Only the wrapper: it is the class.
    assert error_class(SOURCE_COUNT) == "STREAM_FAILED"


def test_error_class_and_sub_keeps_the_sub_class() -> None:
    assert error_class(STATE_FILE) == "CANNOT_LOAD_STATE_STORE"
    assert error_class_and_sub(STATE_FILE) == ("CANNOT_LOAD_STATE_STORE", "CANNOT_READ_STREAMING_STATE_FILE")
    assert error_class_and_sub(VALUE_SCHEMA) == ("STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE", None)


@pytest.mark.parametrize(
    "message",
    [
        "",
        "java.lang.IllegalStateException: something broke",
        "assertion failed: There are [1] partitions",  # a bracketed number is not a class
        "Query [id = 1, runId = 2] terminated",  # nor is lower-case text in brackets
        "value[ABC_DEF] inside a word",  # a class opens the message or follows whitespace
    ],
)
def test_a_message_without_a_class_has_none(message: str) -> None:
    assert error_class(message) is None
    assert error_class_and_sub(message) is None


def test_refusal_rule_by_error_class() -> None:
    assert refusal_rule(KEY_SCHEMA_WRAPPED) == row("stateful-schema")
    assert refusal_rule(KEY_SCHEMA_JVM) == row("stateful-schema")
    assert refusal_rule(VALUE_SCHEMA) == row("stateful-schema")
    assert refusal_rule(OPERATOR_MISMATCH) == row("stateful-add-remove")


def test_refusal_rule_prefers_the_sub_class_entry() -> None:
    assert refusal_rule(STATE_FILE) == row("stateful-add-remove")
    assert refusal_rule(UNNAMED_SOURCES) == row("source-named")
    # Another sub-class of a class mapped only with sub-classes names nothing.
    other = STATE_FILE.replace("CANNOT_READ_STREAMING_STATE_FILE", "UNEXPECTED_FILE_SIZE")
    assert refusal_rule(other) is None


def test_refusal_rule_by_message_pattern() -> None:
    assert refusal_rule(SOURCE_COUNT) == row("source-count")
    assert refusal_rule(SOURCE_COUNT.split("exception: ")[1]) == row("source-count")


def test_refusal_rule_none_for_unrelated_errors() -> None:
    assert refusal_rule("[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012") is None
    assert refusal_rule("java.io.IOException: disk full") is None


def test_row_lookup_error_lists_ids() -> None:
    with pytest.raises(KeyError, match="source-count"):
        row("no-such-row")
