"""The connector checks' registry: each check's id, in the order the checks run and report, the clause of
PySpark's data source contract it stands for (a source's), what it checks, what its failure means, and the
function that judges it without Spark (none for a check the suite runs with Spark).

The only copy: the suites' id lists and their Spark-free checks are read from here
(:data:`harness.conformance.source.suite.SOURCE_CHECK_IDS`, :data:`harness.conformance.sink.suite.SINK_CHECK_IDS`),
and ``python -m harness.cli.checkref --write`` writes ``docs/conformance.md``'s two check tables from it. Texts
are Markdown. Judgements are named ``module:function`` and imported when a suite runs, so this module imports
nothing of the checks (the page's generator reads it without PySpark).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CheckDoc:
    """One check's row: ``clause`` is empty for a sink check (the sink contract has no quoted clauses);
    ``judge`` is the ``module:function`` of a Spark-free check (its probe in, a pass summary or an outcome out),
    empty for a check its suite runs with Spark (after the Spark-free ones)."""

    id: str
    checks: str
    failure: str
    clause: str = ""
    judge: str = ""


_OFFSETS = "harness.conformance.source.offset_checks"
_READS = "harness.conformance.source.checks"
_SINK = "harness.conformance.sink.checks"


#: The source checks, in the order ``check-source`` runs and reports them.
SOURCE_CHECKS: tuple[CheckDoc, ...] = (
    CheckDoc(
        "offsets-json",
        judge=f"{_OFFSETS}:offsets_json",
        clause='`latestOffset` returns "a dict or recursive dict whose key and value are primitive types"',
        checks=(
            "every offset returned (initial, latest, admission steps) is a dict of JSON values with "
            "`json.loads(json.dumps(o)) == o`"
        ),
        failure=(
            "Spark stores offsets as JSON text and hands `json.loads` of it back: tuples become lists, int keys "
            "become strings, NaN and datetimes do not serialise"
        ),
    ),
    CheckDoc(
        "offsets-canonical",
        judge=f"{_OFFSETS}:offsets_canonical",
        clause="(Spark compares offsets as JSON text)",
        checks=(
            "equal offsets serialise to identical text, in this process and in processes with other `PYTHONHASHSEED`s"
        ),
        failure=(
            '`{"a":1,"b":2}` vs `{"b":2,"a":1}` looks like new data (endless empty batches) or a batch that never ends'
        ),
    ),
    CheckDoc(
        "initial-offset-stable",
        judge=f"{_OFFSETS}:initial_offset_stable",
        clause=(
            '"A new streaming query starts reading data from the initial offset. If Spark is restarting an '
            'existing query, it will restart from the check-pointed offset"'
        ),
        checks="`initialOffset()` equal across reader instances and processes",
        failure=(
            "never fails. A difference is a `note`: Spark asks twice before batch 0 runs (once for "
            "`latestOffset`'s `start`, once to plan the batch) and again after a restart before the first commit,"
            " so only batch 0 can move, and only rows that arrive between two answers are affected (measured "
            "below)"
        ),
    ),
    CheckDoc(
        "latest-offset-stable",
        judge=f"{_OFFSETS}:latest_offset_stable",
        clause=(
            '"for subsequent micro-batches, the start offset is the ending offset from the previous micro-batch" '
            "(Spark asks once per trigger)"
        ),
        checks=(
            "`latestOffset` equal when called twice, from a second reader and from a reader restarted at the "
            "checkpointed offset, while no data arrives"
        ),
        failure=(
            "never fails. A difference, forward or back, is a `note` (a per-call counter, data arriving by "
            "itself): what would break the contract, an answer behind `start`, is `latest-offset-monotonic`'s "
            "failure, and what it does to a query is `end-to-end`'s"
        ),
    ),
    CheckDoc(
        "latest-offset-monotonic",
        judge=f"{_OFFSETS}:latest_offset_monotonic",
        clause='"The source can return the `start` parameter as it is, if there is no data to process" (never less)',
        checks=(
            "every `latestOffset(start)` is ≥ its `start`, leaf by leaf: initial → latest, after more data, for a"
            " reader restarted from the checkpointed offset `b` one step in, and for a reader restarted from the "
            "offset `d` reached 5 advances later (7 steps in, where a reader counting from its own start has "
            "fallen behind)"
        ),
        failure="after a restart Spark plans a batch that ends before it starts: rows re-read or skipped",
    ),
    CheckDoc(
        "read-repeatable",
        judge=f"{_READS}:read_repeatable",
        clause=(
            "`read()` \"is static and stateless. You shouldn't access mutable class member or keep in memory state"
            ' between different invocations"'
        ),
        checks="`partitions(a,c)` + `read` of the same range twice gives the same multiset",
        failure=(
            "a batch replayed after a crash is not the batch that was lost (unseeded randomness, clock, consumed state)"
        ),
    ),
    CheckDoc(
        "read-cross-process",
        judge=f"{_READS}:read_cross_process",
        clause="as above, and partitions are pickled to the executors",
        checks=(
            "the same range planned and read in two other processes (other hash seeds), and the parent's "
            "*pickled* partitions read there, give the same multiset"
        ),
        failure="`hash()`/set-order/process state in `read`; partitions that do not pickle",
    ),
    CheckDoc(
        "ranges-contiguous",
        judge=f"{_READS}:ranges_contiguous",
        clause=(
            '`partitions(start, end)`: "called with an empty offset range when start == end, in that case the '
            'method should return an empty sequence"'
        ),
        checks=(
            "rows of `[a,b)` ⊎ `[b,c)` = rows of `[a,c)` where `b` is an offset the source itself returned; "
            "`[b,b)` is empty; a range `latestOffset` moved over is not empty"
        ),
        failure="overlapping or gapped partitions: batch boundaries duplicate or lose rows",
    ),
    CheckDoc(
        "read-between-offsets",
        judge=f"{_READS}:read_between_offsets",
        clause='`readBetweenOffsets`: "invoked during failure recovery to re-read a batch deterministically"',
        checks=(
            "(simple readers) `readBetweenOffsets(s, e)` returns exactly what `read(s)` returned, never nothing "
            "for a non-empty range"
        ),
        failure="the replay after a failure is lost or different",
    ),
    CheckDoc(
        "admission-control",
        judge=f"{_READS}:admission_control",
        clause='"The source must always respect the given readLimit provided by the engine"',
        checks=(
            "under the source's `getDefaultReadLimit()`, `latestOffset(o, limit)` advances to all data, each "
            "batch respects `ReadMaxRows`, and the batches cover the same rows as one unlimited read"
        ),
        failure=(
            "limited batches skip or repeat rows, or the query never catches up; skipped when the default is "
            "`ReadAllAvailable` (Spark then never passes the source a limit: set the option that gives it one to "
            "test this)"
        ),
    ),
    CheckDoc(
        "available-now-target",
        judge=f"{_OFFSETS}:available_now_target",
        clause=(
            '`SupportsTriggerAvailableNow.prepareForTriggerAvailableNow`: record "the offset for the current '
            'latest data at the time (a.k.a the target offset for the query)"; then "the source will not return '
            'an offset higher than the target offset when latestOffset is called"'
        ),
        checks=(
            "an `availableNow` job on a fresh reader: after `prepareForTriggerAvailableNow()`, `latestOffset(o, "
            "limit)` from the initial offset stops at a target equal to what a fresh reader sees available at the"
            " job's start, and stays there once the context adds data (the data that arrives during the job)"
        ),
        failure=(
            "a scheduled `availableNow` job reads data that arrived after it started (and never ends while data "
            "keeps arriving), or ends before the data it had to process; skipped for a reader without "
            "`SupportsTriggerAvailableNow` (Spark runs it as one `Trigger.Once` batch) and, without a context, "
            "when no data arrived during the job"
        ),
    ),
    CheckDoc(
        "end-to-end",
        clause="exactly-once end to end",
        checks=(
            "(Spark) the source feeding the **parquet file sink** under real SIGKILLs (`after_offsets_logged`, "
            "`after_commit_logged`, `sink.commit.after`, one per round; more data arrives while a driver is down)"
            " is exactly-once: the visible rows equal the source's rows of `[initial, end offset of the last "
            "committed batch)` as multisets, where *initial* is the `initialOffset()` answer Spark planned batch "
            "0 with, recorded when Spark asked (`harness/sources/initial.py`), not asked again at check time; "
            "every round that added data planned a new batch. **Without a context** (data that arrives by itself,"
            " or none) each query runs 4 batches under a 100 ms processing-time trigger (one `availableNow` query"
            " would see one `latestOffset`), and the one kill is at `after_offsets_logged` of batch 3, once the "
            "checkpoint is 3 batches in; a source whose data does not arrive by itself plans fewer batches and "
            'passes with "not killed"; a run that read 0 rows is a `skip`'
        ),
        failure=(
            "the file sink is exactly-once on its own, so any lost, duplicated or changed row is the source's; a "
            "round without a new batch means the source stopped reporting data; a source that raised is named "
            "with its own frame"
        ),
    ),
    CheckDoc(
        "latest-offset-behind-checkpoint",
        clause='after a restart "it will restart from the check-pointed offset"',
        checks=(
            "(Spark, from the `end-to-end` run's checkpoint) no logged batch ends behind the batch before it, "
            "leaf by leaf"
        ),
        failure=(
            "`latestOffset` fell behind the checkpoint a restarted reader was given: the evidence names both "
            'batches and offsets, `batch 4 ends at {"rows": 10}, behind batch 3\'s end {"rows": 40}`'
        ),
    ),
)

#: The sink checks, in the order ``check-sink`` runs and reports them.
SINK_CHECKS: tuple[CheckDoc, ...] = (
    CheckDoc(
        "write-invisible-until-commit",
        judge=f"{_SINK}:write_invisible",
        checks="after `write()` of a batch nothing is visible; after `commit()` all of it is",
        failure="readers see rows of a batch Spark may replay (the publish-in-write bug); skipped for foreachBatch",
    ),
    CheckDoc(
        "idempotent-commit",
        judge=f"{_SINK}:idempotent_commit",
        checks=(
            "batches 0, 1, then batch 0 again (same task identities, a new writer: a restarted query) leave each "
            "row visible once"
        ),
        failure="a replay after a crash between the sink's commit and Spark's `commits/N` duplicates the batch",
    ),
    CheckDoc(
        "keys-on-batch-id",
        judge=f"{_SINK}:keys_on_batch_id",
        checks=(
            'batch 0 with task attempt ids 0,1; after a "restart" batch 1 with the *same* ids (they restart in '
            "every SparkContext); then batch 1 replayed with new attempt numbers and ids: batches 0 and 1 visible"
            " exactly once"
        ),
        failure=(
            "idempotency keyed on `taskAttemptId()`/`attemptNumber()` instead of the batch id: new batches "
            "silently dropped, replays duplicated; skipped for foreachBatch"
        ),
    ),
    CheckDoc(
        "abort-cleans-up",
        judge=f"{_SINK}:abort_cleans_up",
        checks=(
            "`abort(messages, batchId)` leaves nothing of the batch visible and no files behind under `path`; the"
            " retried batch is written once (foreachBatch: a call failing part-way, then the retry)"
        ),
        failure="aborted batches leak rows or garbage",
    ),
    CheckDoc(
        "task-retry",
        judge=f"{_SINK}:task_retry",
        checks=(
            "a task attempt that dies mid-write, then its retry, then `commit` of the successful messages: rows once"
        ),
        failure="partial rows of failed attempts reach readers; skipped for foreachBatch",
    ),
    CheckDoc(
        "crash-points",
        checks=(
            "(Spark) one harness run, one fault per crash point a sink reaches, point *i* in batch *i*, each "
            "anomaly attributed to its fault; the sink runs inside the `crash_injecting` wrapper "
            "(`fault_injectors/sinks.py`)"
        ),
        failure="the evidence lists, per point, what readers saw: `sink.commit.after (kill, batch 7): 20 duplicate`",
    ),
    CheckDoc(
        "crash-anywhere",
        checks=(
            "(Spark) a fault-free census run records the steps of the sink's own code in batch 1 "
            "([fault-injection.md](fault-injection.md#steps-of-the-sinks-own-code-sinkstep-crash-anywhere)); then"
            " one run with a fault just after each **effect boundary** of that batch (the step before the first "
            "effect, every effect, and every step inside a running effect; see "
            "[fault-injection.md](fault-injection.md#steps-of-the-sinks-own-code-sinkstep-crash-anywhere), "
            '"Effects and boundaries"), step *i* in a batch of its own, all batches the same size as the census '
            "batch. `--steps N` (default 30) tries every boundary when they fit and takes a seeded sample of N "
            "only beyond (each boundary at most once); `--steps all` tries every boundary, `--every-step` every "
            "step; `--batch-rows N` sets the rows of a batch (default 20); `--wrappers commit` aims only at some "
            "wrapped functions. The summary says how many steps and boundaries the batch had and how many were "
            "tried (`census_steps`, `boundaries`, `steps_tried` in the JSON). A step described differently where "
            "its fault fired than in the census (non-deterministic sink code) is an error, not a verdict"
        ),
        failure=(
            "a window between two statements of the sink: the evidence names the step, `raise after step 10 of "
            "batch 10 in foreach_batch: two_txn_foreach_batch.py:60 write_batch -> sqlite3.Connection.execute: 20"
            " duplicate`; `steps` in the JSON lists every step tried"
        ),
    ),
    CheckDoc(
        "declared-guarantee",
        checks=(
            "the guarantee the sink actually showed (from the anomaly kinds of every check that ran: duplicates →"
            " at-least-once, losses → at-most-once, both → none) satisfies the declared one"
        ),
        failure="the report says both: `declared exactly-once but the sink showed at-least-once`",
    ),
)


def spark_free(checks: Sequence[CheckDoc]) -> tuple[str, ...]:
    """The ids of ``checks`` judged without Spark, in their order."""
    return tuple(c.id for c in checks if c.judge)


def judges(checks: Sequence[CheckDoc]) -> dict[str, Callable[[Any], Any]]:
    """id -> the function of each Spark-free check of ``checks``, in their order (their modules imported now)."""
    out: dict[str, Callable[[Any], Any]] = {}
    for c in checks:
        if c.judge:
            module, _, name = c.judge.partition(":")
            out[c.id] = getattr(importlib.import_module(module), name)
    return out
