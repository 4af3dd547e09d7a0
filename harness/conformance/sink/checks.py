"""Sink protocol checks: what a sink must do when Spark writes, replays, retries and aborts.

Each check writes deterministic batches into a fresh ``path`` and asks the
user's read-back function what readers see. For a ``DataSourceStreamWriter``
Spark's side is simulated in-process (:mod:`.task_sim`: pickled writers and
messages, a real ``TaskContext`` with the batch id); for a ``foreachBatch``
function the batches are real DataFrames of a local SparkSession.

Ids: ``write-invisible-until-commit``, ``idempotent-commit``,
``keys-on-batch-id``, ``abort-cleans-up``, ``task-retry``. A finding that only
breaks a stronger guarantee than the declared one (duplicates from an
at-least-once sink) is a ``warn``; losing rows, or leaving files behind after
``abort``, is always a ``fail``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.conformance.checkdocs import SINK_CHECKS, spark_free
from harness.conformance.guarantees import AT_LEAST_ONCE, EXTRA_KINDS
from harness.conformance.results import CheckOutcome, CheckSkipped, Status
from harness.conformance.sink.task_sim import COLUMNS, SCHEMA, TaskFailure, WriterSim, batch_rows, expected_rows
from harness.sources.loading import Ref

#: The Spark-free sink checks' ids, in the registry's order (:mod:`harness.conformance.checkdocs`).
PROTOCOL_CHECK_IDS: tuple[str, ...] = spark_free(SINK_CHECKS)
ReadBack = Callable[[str], Iterable[Mapping[str, Any]]]


@dataclass(frozen=True)
class SinkUnderTest:
    """``target``: a ``DataSource`` subclass with ``streamWriter``, or a
    foreachBatch factory ``factory(path, **options) -> fn(df, batch_id)``;
    ``read_back(path)`` returns the rows readers of ``path`` see, as dicts."""

    target: Any
    read_back: ReadBack
    options: Mapping[str, str]
    target_ref: Ref
    read_back_ref: Ref

    @property
    def kind(self) -> str:
        from pyspark.sql.datasource import DataSource

        if isinstance(self.target, type) and issubclass(self.target, DataSource):
            return "datasource"
        if callable(self.target):
            return "foreach_batch"
        raise TypeError(f"{self.target!r} is neither a DataSource subclass nor a foreachBatch factory")


def _key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(row.get(c) for c in COLUMNS)


def multiset(rows: Iterable[Mapping[str, Any]]) -> Counter[tuple[Any, ...]]:
    return Counter(_key(r) for r in rows)


class SinkProbe:
    """Fresh paths, the writer simulation or foreachBatch calls, and reading back."""

    def __init__(self, sink: SinkUnderTest, workdir: Path, declared: str, spark: Callable[[], Any]) -> None:
        self.sink, self.workdir, self.declared, self._spark = sink, Path(workdir), declared, spark

    def path(self, name: str) -> str:
        d = self.workdir / name
        d.mkdir(parents=True, exist_ok=True)
        return str(d / "sink")

    def sim(self, path: str) -> WriterSim:
        return WriterSim(self.sink.target, {**self.sink.options, "path": path})

    def visible(self, path: str) -> Counter[tuple[Any, ...]]:
        return multiset(self.sink.read_back(path))

    def foreach_batch(self, path: str) -> Callable[[Any, int], None]:
        return self.sink.target(path, **self.sink.options)  # type: ignore[no-any-return]

    def frame(self, batch_id: int, fail: bool = False) -> Any:
        """The rows of batch ``batch_id`` as a DataFrame (``fail``: evaluating it raises mid-way)."""
        from pyspark.sql import functions as F

        spark = self._spark()
        df = spark.createDataFrame(expected_rows(batch_id), SCHEMA).repartition(2, "partition")
        if fail:
            last = max(r["offset"] for r in batch_rows(batch_id, 1))

            def boom(offset, value):  # type: ignore[no-untyped-def]  # no hints: PySpark infers UDF types from them
                if offset == last:
                    raise TaskFailure("simulated failure while the batch is being written")
                return value

            boom = F.udf(boom, "bigint")

            df = df.withColumn("value", boom("offset", "value"))
        return df


def judge(p: SinkProbe, cid: str, found: list[tuple[str, str]], ok: str, summary: str, fix: str) -> CheckOutcome:
    """``found``: (anomaly kind, evidence line). Loss or leftovers fail; extra rows
    fail for exactly-once and warn for a sink declared at-least-once."""
    if not found:
        return CheckOutcome(cid, "pass", ok)
    kinds = tuple(sorted({k for k, _ in found}))
    only_extra = set(kinds) <= EXTRA_KINDS
    status: Status = "warn" if only_extra and p.declared == AT_LEAST_ONCE else "fail"
    note = " (allowed for an at-least-once sink)" if status == "warn" else ""
    return CheckOutcome(cid, status, summary + note, tuple(line for _, line in found), fix, kinds)


def compare(want: Counter[tuple[Any, ...]], got: Counter[tuple[Any, ...]], when: str) -> list[tuple[str, str]]:
    extra, missing = got - want, want - got
    out = []
    if extra:
        out.append(("duplicate", f"{when}: {sum(extra.values())} row(s) too many, e.g. {next(iter(extra))}"))
    if missing:
        out.append(("lost", f"{when}: {sum(missing.values())} row(s) missing, e.g. {next(iter(missing))}"))
    return out


def write_invisible(p: SinkProbe) -> CheckOutcome:
    cid = "write-invisible-until-commit"
    if p.sink.kind != "datasource":
        raise CheckSkipped("a foreachBatch function writes and commits in one call (see crash-points)")
    path = p.path(cid)
    sim = p.sim(path)
    msgs = sim.tasks(0)
    early = p.visible(path)
    found = [
        ("uncommitted-visible", f"after write() of batch 0, before commit(): {sum(early.values())} row(s) visible")
    ]
    found = found if early else []
    sim.commit(msgs, 0)
    found += compare(multiset(expected_rows(0)), p.visible(path), "after commit() of batch 0")
    return judge(
        p,
        cid,
        found,
        "nothing is visible after write(); commit() publishes the whole batch",
        "readers see rows before Spark commits the batch: a batch replayed after a crash shows them twice",
        "stage rows in write() (invisible to readers) and publish them atomically in commit(messages, batchId)",
    )


def idempotent_commit(p: SinkProbe) -> CheckOutcome:
    cid = "idempotent-commit"
    path = p.path(cid)
    if p.sink.kind == "datasource":
        sim = p.sim(path)
        for b in (0, 1):
            sim.commit(sim.tasks(b), b)
        replay = p.sim(path)  # a new query run (restarted driver) replays batch 0, same task identities
        replay.commit(replay.tasks(0), 0)
    else:
        fn = p.foreach_batch(path)
        for b in (0, 1, 0):
            fn(p.frame(b), b)
    found = compare(multiset(expected_rows(0, 1)), p.visible(path), "batches 0, 1, then batch 0 again")
    return judge(
        p,
        cid,
        found,
        "writing and committing batch 0 a second time changes nothing readers see",
        "a batch written and committed twice (Spark's replay after a crash between the sink's commit and "
        "commits/N) is not a no-op",
        "record the committed batch id atomically with the data and skip a batch id already committed",
    )


def keys_on_batch_id(p: SinkProbe) -> CheckOutcome:
    cid = "keys-on-batch-id"
    if p.sink.kind != "datasource":
        raise CheckSkipped("a foreachBatch function gets the batch id directly and has no task attempts")
    path = p.path(cid)
    first = p.sim(path)
    first.commit([first.task(0, part, task_attempt_id=part) for part in (0, 1)], 0)
    restarted = p.sim(path)  # a new JVM: task attempt ids restart at 0, so batch 1 reuses batch 0's ids
    restarted.commit([restarted.task(1, part, task_attempt_id=part) for part in (0, 1)], 1)
    found = compare(multiset(expected_rows(0, 1)), p.visible(path), "batch 1 after a restart reusing task ids")
    again = p.sim(path)  # batch 1 replayed with new attempt numbers and ids
    again.commit([again.task(1, part, attempt=1, task_attempt_id=7 + part) for part in (0, 1)], 1)
    found += compare(multiset(expected_rows(0, 1)), p.visible(path), "batch 1 replayed with new task attempts")
    return judge(
        p,
        cid,
        found,
        "output is keyed on the batch id: new task attempts neither duplicate nor hide rows",
        "the sink keys its output on the task attempt, not on the batch id: task attempt ids restart with "
        "every SparkContext and change on every retry",
        "key idempotency on the batch id passed to commit() (or streaming.sql.batchId in write()), never on "
        "TaskContext.taskAttemptId() / attemptNumber()",
    )


def _files(path: str) -> set[str]:
    root = Path(path)
    if root.is_file():
        return set()
    return {str(Path(d) / f) for d, _, fs in os.walk(root) for f in fs} if root.exists() else set()


def abort_cleans_up(p: SinkProbe) -> CheckOutcome:
    cid = "abort-cleans-up"
    path = p.path(cid)
    found: list[tuple[str, str]] = []
    if p.sink.kind == "datasource":
        sim = p.sim(path)
        sim.commit(sim.tasks(0), 0)
        before = _files(path)
        msgs = sim.tasks(1)
        sim.abort(msgs, 1)
        shown = compare(multiset(expected_rows(0)), p.visible(path), "after abort() of batch 1")
        found += [("uncommitted-visible" if k == "duplicate" else k, line) for k, line in shown]
        left = sorted(_files(path) - before)
        if left and not shown:
            found.append(("leftover", f"abort() of batch 1 left {len(left)} invisible file(s), e.g. {left[0]}"))
        retry = p.sim(path)
        retry.commit(retry.tasks(1), 1)
    else:
        fn = p.foreach_batch(path)
        fn(p.frame(0), 0)
        spark = p._spark()
        spark.sparkContext.setLogLevel("OFF")  # the failure below is intended: keep its stack traces out
        try:
            fn(p.frame(1, fail=True), 1)
        except Exception:
            pass  # the failure is the point; Spark retries the batch
        finally:
            spark.sparkContext.setLogLevel("ERROR")
        found += compare(multiset(expected_rows(0)), p.visible(path), "after batch 1 failed part-way")
        fn(p.frame(1), 1)
    found += compare(multiset(expected_rows(0, 1)), p.visible(path), "after batch 1 was retried")
    return judge(
        p,
        cid,
        found,
        "an aborted (or failed) batch leaves nothing behind and its retry is written once",
        "an aborted batch leaves rows or files behind",
        "abort(messages, batchId) must delete what write() staged; nothing of the batch may be visible before commit",
    )


def task_retry(p: SinkProbe) -> CheckOutcome:
    cid = "task-retry"
    if p.sink.kind != "datasource":
        raise CheckSkipped("task retries happen inside the foreachBatch function's own Spark jobs")
    path = p.path(cid)
    sim = p.sim(path)
    try:
        sim.task(0, 0, attempt=0, task_attempt_id=0, fail_after=3)
    except TaskFailure:
        pass
    msgs = [sim.task(0, 0, attempt=1, task_attempt_id=2), sim.task(0, 1, attempt=0, task_attempt_id=1)]
    sim.commit(msgs, 0)
    found = compare(multiset(expected_rows(0)), p.visible(path), "after a failed and a retried task attempt")
    return judge(
        p,
        cid,
        found,
        "a task attempt that died mid-write leaves nothing; the retried attempt is committed once",
        "a failed task attempt's partial rows reach readers, or the retry's rows are missing",
        "write() must only stage; commit() publishes exactly the files named by the messages it receives",
    )
