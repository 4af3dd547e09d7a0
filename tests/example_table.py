"""Every example connector with the status each conformance check must give it: both error rates in one table.

A correct example that a check fails is a false alarm; a broken example that its check passes is a miss. The
table pins both for every example in ``examples/connectors/`` (and the reference source and sink), so a change
to a check shows at once which correct connectors it starts to reject and which bugs it stops catching.
``tests/unit/test_example_table.py`` runs the Spark-free checks against it; ``tests/integration/
test_example_table_e2e.py`` runs the Spark-backed ones (``end-to-end``, ``latest-offset-behind-checkpoint``,
``crash-points``, ``crash-anywhere``). The sinks' rows are in :mod:`tests.example_table_sinks`.

An expected status is one status, or a ``frozenset`` of the statuses a clock-driven example may give depending
on when the probe runs (e.g. ``{"pass", "skip"}``: a range compared within one clock tick holds zero rows).
``None`` leaves a Spark-backed cell unpinned (not measured; the integration test does not judge it). The
semantics are Spark's contract only: habits of correct sources (answers that depend on the reader instance, on
how often it was asked, or on the clock) are ``note``, never ``fail``; a comparison of zero rows is ``skip``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Expect = str | frozenset[str] | None

PURE_SOURCE_CHECKS: tuple[str, ...] = (
    "offsets-json",
    "offsets-canonical",
    "initial-offset-stable",
    "latest-offset-stable",
    "latest-offset-monotonic",
    "read-repeatable",
    "read-cross-process",
    "ranges-contiguous",
    "read-between-offsets",
    "admission-control",
    "available-now-target",
)
SPARK_SOURCE_CHECKS: tuple[str, ...] = ("end-to-end", "latest-offset-behind-checkpoint")

EX = "examples.connectors"
LOG = f"{EX}._jsonl:log_context"
TICK = frozenset({"pass", "skip"})  # a range read within one clock tick holds zero rows: skipped, not passed


def _rate_like_options() -> dict[str, str]:
    """A minute of the rate-like source's rows has arrived (its start instant must be fixed per run)."""
    return {"startMs": str(time.time_ns() // 1_000_000 - 60_000)}


@dataclass(frozen=True)
class SourceRow:
    """One example source: ``source`` / ``context`` as ``module:attr``; ``expect`` every check's status."""

    name: str
    source: str
    context: str | None
    expect: Mapping[str, Expect]
    options: Callable[[], dict[str, str]] = dict
    correct: bool = True
    heavy: bool = True  # the Spark-backed cells run only in the heavy tier

    def expected(self, check: str) -> Expect:
        return self.expect[check]


def source_row(
    name: str,
    source: str,
    context: str | None = LOG,
    *,
    correct: bool,
    heavy: bool = True,
    options: Callable[[], dict[str, str]] = dict,
    e2e: Expect = "pass",
    behind: Expect = "pass",
    **cells: Expect,
) -> SourceRow:
    """A row whose unnamed Spark-free cells are those of a partitioned ``DataSourceStreamReader`` that conforms
    (every check ``pass``; ``read-between-offsets``, ``admission-control`` and ``available-now-target`` ``skip``: no
    limit, no ``SupportsTriggerAvailableNow``). ``cells`` names the
    others with ``_`` for ``-`` (``latest_offset_stable="note"``)."""
    expect: dict[str, Expect] = {c: "pass" for c in PURE_SOURCE_CHECKS}
    expect |= {"read-between-offsets": "skip", "admission-control": "skip", "available-now-target": "skip"}
    for key, status in cells.items():
        check = key.replace("_", "-")
        if check not in PURE_SOURCE_CHECKS:
            raise ValueError(f"row {name}: unknown check {check}")
        expect[check] = status
    expect |= {"end-to-end": e2e, "latest-offset-behind-checkpoint": behind}
    return SourceRow(name, source, context, expect, options, correct, heavy)


SOURCES: tuple[SourceRow, ...] = (
    # The reference and the correct examples: every status a pass, skip or note (false alarms would show here).
    source_row(
        "reference",
        "scenarios.replayable_source:ReplayableDataSource",
        "harness.sources.contexts:replayable_context",
        correct=True,
        available_now_target="pass",
        admission_control="pass",
    ),
    source_row("jsonl", f"{EX}.jsonl_source:JsonlSource", correct=True, available_now_target="pass"),
    source_row("jsonl_simple", f"{EX}.jsonl_source:JsonlSimpleSource", correct=True, read_between_offsets="pass"),
    source_row(
        "rate_like",
        f"{EX}.rate_like_source:RateLikeSource",
        None,
        correct=True,
        options=_rate_like_options,
        latest_offset_stable=frozenset({"pass", "note"}),
        ranges_contiguous=TICK,
    ),
    source_row(
        "per_call_counter",
        f"{EX}.per_call_counter:PerCallCounterSource",
        None,
        correct=True,
        latest_offset_stable="note",
    ),
    source_row(
        "clock_ticks",
        f"{EX}.clock_ticks:ClockTicksSource",
        None,
        correct=True,
        initial_offset_stable="note",
        latest_offset_stable=frozenset({"pass", "note"}),
        read_repeatable=TICK,
        read_cross_process=TICK,
        ranges_contiguous=TICK,
    ),
    source_row(
        "growing_partitions",
        f"{EX}.growing_partitions:GrowingPartitionsSource",
        f"{EX}.growing_partitions:growing_context",
        correct=True,
    ),
    source_row("arrow_batches", f"{EX}.arrow_batches:ArrowBatchesSource", correct=True, available_now_target="pass"),
    source_row(
        "capped_batches",
        f"{EX}.capped_batches:CappedBatchesSource",
        correct=True,
        available_now_target="pass",
        admission_control="pass",
    ),
    source_row("cached_reads", f"{EX}.cached_reads:CachedReadsSource", correct=True, available_now_target="pass"),
    source_row(
        "counter_available_now",
        f"{EX}.counter_available_now:CounterAvailableNowSource",
        None,
        correct=True,
        latest_offset_stable="note",
        available_now_target="pass",
    ),
    # Broken examples: each fails its own check(s) and nothing unrelated (misses would show here). Two that
    # inherit SupportsTriggerAvailableNow and override latestOffset without the target also fail
    # available-now-target: they read past it (latest_offset_from_zero, hash_ordered_offsets).
    source_row(
        "available_now_past_target",
        f"{EX}.available_now_past_target:PastTargetSource",
        correct=False,
        available_now_target="fail",
        e2e="pass",  # reading data that arrived during a job is no loss or duplicate
    ),
    source_row(
        "overlapping_partitions",
        f"{EX}.overlapping_partitions:OverlappingPartitionsSource",
        correct=False,
        available_now_target="pass",
        ranges_contiguous="fail",
        e2e="fail",
    ),
    source_row(
        "unseeded_data",
        f"{EX}.unseeded_data:UnseededDataSource",
        correct=False,
        available_now_target="pass",
        read_repeatable="fail",
        read_cross_process="fail",
        ranges_contiguous="fail",
        e2e="fail",
    ),
    source_row(
        "latest_offset_from_zero",
        f"{EX}.latest_offset_from_zero:RestartsFromZeroSource",
        correct=False,
        available_now_target="fail",
        latest_offset_stable="note",
        latest_offset_monotonic="fail",
        e2e="fail",
        behind=None,  # not measured: whether Spark logs the batch that ends behind it depends on the round
    ),
    source_row(
        "counts_from_zero",
        f"{EX}.counts_from_zero:CountsFromZeroSource",
        None,
        correct=False,
        latest_offset_stable="note",
        e2e="fail",
        behind="fail",
    ),
    source_row(
        "empty_read_between",
        f"{EX}.empty_read_between:EmptyReadBetweenSource",
        correct=False,
        read_repeatable="skip",  # readBetweenOffsets gives 0 rows both times: nothing to compare
        read_cross_process="skip",
        ranges_contiguous="fail",
        read_between_offsets="fail",
        e2e="fail",
    ),
    source_row(
        "hash_ordered_offsets",
        f"{EX}.hash_ordered_offsets:HashOrderedOffsetsSource",
        f"{EX}.hash_ordered_offsets:six_shard_context",
        correct=False,
        available_now_target="fail",
        offsets_canonical="fail",
        e2e="pass",  # the harness pins PYTHONHASHSEED=0 in every Spark process (docs/conformance.md)
    ),
    source_row(
        "per_call_counter_from_zero",
        f"{EX}.per_call_counter_from_zero:PerCallCounterFromZeroSource",
        None,
        correct=False,
        heavy=False,
        latest_offset_stable="note",
        latest_offset_monotonic="fail",
        e2e="fail",
        behind="fail",
    ),
    source_row(
        # A third-party-style source whose latestOffset raises (a stand-in API's missing field): the contract checks
        # and the end-to-end run name its frame; the habit checks, never a failure, are skipped with the cause.
        "raising_latest_offset",
        f"{EX}.raising_latest_offset:RaisingLatestOffsetSource",
        correct=False,
        offsets_json="fail",
        offsets_canonical="fail",
        initial_offset_stable="skip",
        latest_offset_stable="skip",
        latest_offset_monotonic="fail",
        read_repeatable="fail",
        read_cross_process="fail",
        ranges_contiguous="fail",
        admission_control="fail",
        e2e="fail",
        behind="skip",
    ),
    source_row(
        # Its twin whose read raises in Spark's Python worker (records without the envelope it expects).
        "raising_read",
        f"{EX}.raising_read:RaisingReadSource",
        correct=False,
        read_repeatable="fail",
        read_cross_process="fail",
        ranges_contiguous="fail",
        e2e="fail",
        behind="skip",
    ),
    source_row(
        # The subject's own exception: every read check and the end-to-end run name poison_record.py's frame.
        "poison_record",
        f"{EX}.poison_record:PoisonRecordSource",
        None,
        correct=False,
        latest_offset_stable="note",
        read_repeatable="fail",
        read_cross_process="fail",
        ranges_contiguous="fail",
        e2e="fail",
        behind="pass",
    ),
    source_row(
        "int_key_offsets",
        f"{EX}.int_key_offsets:IntKeyOffsetsSource",
        f"{EX}.growing_partitions:growing_context",
        correct=False,
        offsets_json="fail",
        e2e=None,
        behind=None,
    ),
    source_row(
        "ignores_read_limit",
        f"{EX}.ignores_read_limit:IgnoresReadLimitSource",
        correct=False,
        available_now_target="pass",
        admission_control="fail",
        e2e="pass",  # one big batch is still exactly-once
    ),
    source_row(
        "draining_cache",
        f"{EX}.draining_cache:DrainingCacheSource",
        correct=False,
        available_now_target="pass",
        read_repeatable="fail",
        read_cross_process="fail",
        e2e=None,  # a replay reads the range again only in a reused Python worker of the same JVM
    ),
)


def matches(expected: Expect, actual: str) -> bool:
    """Whether ``actual`` is what the cell allows (an unpinned cell allows anything)."""
    if expected is None:
        return True
    return actual in expected if isinstance(expected, frozenset) else actual == expected


def mismatches(expect: Mapping[str, Expect], actual: Mapping[str, str], checks: tuple[str, ...]) -> list[str]:
    """One line per check of ``checks`` whose actual status the table does not allow."""
    return [
        f"{c}: expected {sorted(e) if isinstance(e, frozenset) else e}, got {actual.get(c)}"
        for c in checks
        if not matches(e := expect[c], actual.get(c, "missing"))
    ]


def definite(rows: Sequence[Any], check: str, status: str) -> list[str]:
    """Names of the rows that expect exactly ``status`` (no alternative) from ``check``."""
    return [r.name for r in rows if r.expect[check] == status]
