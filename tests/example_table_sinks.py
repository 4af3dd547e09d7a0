"""The sink rows of the example table (:mod:`tests.example_table`): every example sink, and the reference sink,
with the status each sink check must give it. ``DataSource`` sinks get the five protocol checks without Spark
(``tests/unit/test_example_table.py``); foreachBatch sinks need a SparkSession for them, so their rows, and every
``crash-points`` / ``crash-anywhere`` / ``declared-guarantee`` cell, are judged by the integration test."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tests.example_table import EX, Expect

PROTOCOL_SINK_CHECKS: tuple[str, ...] = (
    "write-invisible-until-commit",
    "idempotent-commit",
    "keys-on-batch-id",
    "abort-cleans-up",
    "task-retry",
)
SPARK_SINK_CHECKS: tuple[str, ...] = ("crash-points", "crash-anywhere")
GUARANTEE = "declared-guarantee"


@dataclass(frozen=True)
class SinkRow:
    """One example sink: ``target`` (a ``DataSource`` or a foreachBatch factory) and ``read_back`` as
    ``module:attr``; ``protocol``: the checks run without Spark (a ``DataSource`` sink only)."""

    name: str
    target: str
    read_back: str
    expect: Mapping[str, Expect]
    correct: bool
    protocol: bool = True
    cli_args: tuple[str, ...] = field(default=())


def sink_row(
    name: str,
    target: str,
    read_back: str,
    *,
    correct: bool,
    protocol: bool = True,
    crash_points: Expect = "pass",
    crash_anywhere: Expect = "pass",
    cli_args: tuple[str, ...] = (),
    **cells: Expect,
) -> SinkRow:
    """A row whose unnamed cells are those of a conforming ``DataSourceStreamWriter`` (every check ``pass``);
    a foreachBatch sink (``protocol=False``) skips the three checks it cannot be given."""
    expect: dict[str, Expect] = {c: "pass" for c in PROTOCOL_SINK_CHECKS}
    if not protocol:
        expect |= {c: "skip" for c in ("write-invisible-until-commit", "keys-on-batch-id", "task-retry")}
    for key, status in cells.items():
        check = key.replace("_", "-")
        if check not in (*PROTOCOL_SINK_CHECKS, GUARANTEE):
            raise ValueError(f"row {name}: unknown check {check}")
        expect[check] = status
    expect.setdefault(GUARANTEE, "pass" if correct else "fail")
    expect |= {"crash-points": crash_points, "crash-anywhere": crash_anywhere}
    return SinkRow(name, target, read_back, expect, correct, protocol, cli_args)


SINKS: tuple[SinkRow, ...] = (
    sink_row(
        "reference_transactional",
        "scenarios.sinks.transactional:TransactionalFileSink",
        "scenarios.sinks.transactional:read_visible",
        correct=True,
    ),
    sink_row(
        "message_carried",
        f"{EX}.message_carried_sink:MessageCarriedSink",
        f"{EX}.message_carried_sink:read_back",
        correct=True,
    ),
    sink_row(
        "streamed_staging",
        f"{EX}.streamed_staging_sink:StreamedStagingSink",
        f"{EX}.streamed_staging_sink:read_back",
        correct=True,
    ),
    sink_row(
        "publish_in_write",
        f"{EX}.publish_in_write_sink:PublishInWriteSink",
        f"{EX}.publish_in_write_sink:read_back",
        correct=False,
        write_invisible_until_commit="fail",
        idempotent_commit="fail",
        keys_on_batch_id="fail",
        abort_cleans_up="fail",
        crash_points="fail",
        crash_anywhere=None,
    ),
    sink_row(
        "attempt_keyed",
        f"{EX}.attempt_keyed_sink:AttemptKeyedSink",
        f"{EX}.attempt_keyed_sink:read_back",
        correct=False,
        keys_on_batch_id="fail",
    ),
    sink_row(
        "rename_one_by_one",
        f"{EX}.rename_one_by_one_sink:RenameOneByOneSink",
        f"{EX}.rename_one_by_one_sink:read_back",
        correct=False,
        crash_anywhere="fail",
        cli_args=("--wrappers", "commit"),
    ),
    sink_row(
        "message_append",
        f"{EX}.message_append_sink:MessageAppendSink",
        f"{EX}.message_append_sink:read_back",
        correct=False,
        idempotent_commit="fail",
        keys_on_batch_id="fail",
        crash_points="fail",
        crash_anywhere=None,
    ),
    sink_row(
        "staging_glob",
        f"{EX}.staging_glob_sink:StagingGlobSink",
        f"{EX}.staging_glob_sink:read_back",
        correct=False,
        task_retry="fail",
        crash_points=None,  # fails only where a task attempt dies mid-write and is retried in the same batch
        crash_anywhere=None,
    ),
    sink_row(
        "two_txn_foreach_batch",
        f"{EX}.two_txn_foreach_batch:two_txn_sink",
        f"{EX}.two_txn_foreach_batch:read_back",
        correct=False,
        protocol=False,
        crash_anywhere="fail",
    ),
    sink_row(
        "jvm_memory_dedup",  # marks a batch in Spark's memory (a global temporary view) before writing it
        f"{EX}.jvm_memory_dedup:jvm_memory_sink",
        f"{EX}.jvm_memory_dedup:read_back",
        correct=False,
        protocol=False,
        abort_cleans_up="fail",
        crash_points="fail",  # raises restart the query in the same JVM, whose view skips the batch: lost rows
        crash_anywhere="fail",  # a kill loses the view: the replay writes the batch again
    ),
    sink_row(
        "keyed_two_txn_foreach_batch",
        f"{EX}.two_txn_foreach_batch:keyed_two_txn_sink",
        f"{EX}.two_txn_foreach_batch:read_back",
        correct=True,
        protocol=False,
    ),
    sink_row(
        "two_txn_row_fields",
        f"{EX}.two_txn_row_fields:two_txn_row_fields_sink",
        f"{EX}.two_txn_row_fields:read_back",
        correct=False,
        protocol=False,
        crash_anywhere="fail",
        cli_args=("--batch-rows", "200", "--steps", "10"),
    ),
)
