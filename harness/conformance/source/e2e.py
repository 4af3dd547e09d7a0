"""The ``end-to-end`` source check: the source under real SIGKILLs feeding the
parquet file sink must be exactly-once.

The file sink is exactly-once on its own (its ``_spark_metadata`` log hides
files of uncommitted attempts), so any lost, duplicated or changed row comes
from the source: offsets that do not replay, reads that differ on a replay,
data that moved. The run (:func:`harness.conformance.source.run.run_source`)
feeds one round of data through the external context per kill and kills the
driver at ``after_offsets_logged`` (the batch is re-run from its logged
offsets), ``after_commit_logged`` (the next batch starts from the committed
offset in a new process) and ``sink.commit.after`` (a committed batch is
re-planned), one kill per round. Expected rows are the source's own rows of
``[initialOffset, end offset of the last committed batch)``, read in the driver.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.conformance.raised import Raised, log_texts, source_raised, spark_words
from harness.conformance.results import CheckOutcome
from harness.conformance.source.run import SourceOutcome, python_source_spec, run_source
from harness.sources.contexts import ContextFactory, feeds_data, make_context
from harness.sources.loading import Ref, add_import_root
from harness.sources.reader import SourceUnderTest
from harness.verdict.rowdiff import row_diff

KILL_POINTS = ("after_offsets_logged", "after_commit_logged", "sink.commit.after")
CHECK_ID = "end-to-end"
BEHIND_ID = "latest-offset-behind-checkpoint"
MAX_EXAMPLES = 6
#: Without a context: batches each query commits (processing-time trigger), and the batch the one kill is in.
CONTEXTLESS_BATCHES = 4
CONTEXTLESS_KILL_BATCH = 3


def offsets_behind(checkpoint: Path) -> tuple[list[str], int]:
    """Each logged batch the checkpoint inspector finds moving backwards from the batch before it
    (``offset-regression``: a ``latestOffset`` that fell behind the checkpoint it was restarted from), named
    with both offsets; and the number of logged batches."""
    from harness.conformance.source.offsets import regressions, short
    from harness.inspector import CheckpointError, inspect_checkpoint

    try:
        report = inspect_checkpoint(checkpoint, verify_checksums=False)
    except (CheckpointError, OSError):
        return [], 0
    logged = report.model.offsets
    bad = []
    for b in sorted({f.batch_id for f in report.findings if f.id == "offset-regression" and f.batch_id is not None}):
        e0, e1 = logged[b - 1].sources[0], logged[b].sources[0]
        back = "; ".join(regressions(e0, e1)[:3]) or "the offset disappeared"
        bad.append(f"batch {b} ends at {short(e1)}, behind batch {b - 1}'s end {short(e0)} ({back})")
    return bad, len(logged)


def behind_result(checkpoint: Path) -> CheckOutcome:
    """``latest-offset-behind-checkpoint`` of a finished end-to-end run."""
    bad, n = offsets_behind(checkpoint)
    if bad:
        return CheckOutcome(
            BEHIND_ID,
            "fail",
            "latestOffset fell behind the checkpoint: Spark planned a batch that ends before the previous one "
            "(rows re-read, skipped or never seen again)",
            tuple(bad),
            fix="after a restart the reader only knows the checkpointed `start`: compute latestOffset from the "
            "external system's durable positions (>= start), not from what this reader instance has seen",
            observed=("lost", "duplicate"),
        )
    if n < 2:
        return CheckOutcome(BEHIND_ID, "skip", f"the run logged {n} batch(es): nothing to compare")
    return CheckOutcome(BEHIND_ID, "pass", f"the end offsets of all {n} logged batches only move forward")


def describe_anomalies(outcome: SourceOutcome) -> list[str]:
    """Lines naming each anomaly kind with counts and the first rows (batch and preceding kill if known)."""
    result = outcome.result
    if result is None:
        return []
    lines = []
    for kind, n in result.counts().items():
        lines.append(f"{n} {kind} row(s)")
        for a in [a for a in result.anomalies if a.kind == kind][:MAX_EXAMPLES]:
            where = f"batch {a.batch_id}" if a.batch_id is not None else "batch unknown"
            after = f", after {a.fault.description}" if a.fault and a.batch_id is not None else ""
            row = " ".join(f"{k}={v}" for k, v in a.row.items())
            lines.append(f"  {where}{after}: seen {a.observed_count}x, expected {a.expected_count}x: {row}")
    return lines


def run_end_to_end(
    source: SourceUnderTest,
    ref: Ref,
    context: ContextFactory | None,
    workdir: Path,
    *,
    kills: int = 2,
    batch_rows: int = 30,
    echo: Callable[[str], None] = print,
    keep: bool = False,
) -> tuple[CheckOutcome, CheckOutcome]:
    """The ``end-to-end`` and ``latest-offset-behind-checkpoint`` results of one run in ``workdir`` (kept on
    failure or with ``keep``). Without a context that feeds data, each query runs ``CONTEXTLESS_BATCHES``
    batches of the data that arrives by itself, and the one kill is at ``after_offsets_logged`` of batch
    ``CONTEXTLESS_KILL_BATCH`` (the checkpoint 3 batches in); a source with no data arriving plans fewer
    batches, and the pass says it was not killed."""
    add_import_root(ref.root)
    ctx = make_context(context, workdir / "context")
    feeds = feeds_data(ctx)
    try:
        rounds, points, kill_batch = max(2, kills), KILL_POINTS[: max(0, kills)], 0
        spec = python_source_spec(source, ref, ctx.options())
        if not feeds:
            rounds, points, kill_batch = 1, points[:1], CONTEXTLESS_KILL_BATCH
            spec["batches_per_run"] = CONTEXTLESS_BATCHES

        def feed(r: int) -> dict[str, int]:
            ctx.add_data(batch_rows)
            return {"rows": batch_rows if feeds else 0}

        outcome = run_source(
            workdir / "run", spec, feed, rounds, points, echo, kill_batch=kill_batch, kills_optional=not feeds
        )
        # While the context's data is there: the reader class names where a method that returned a bad value is.
        reader = reader_class(source, spec["options"]) if outcome.verdict == "unknown" else None
    finally:
        ctx.close()
    behind = behind_result(outcome.run_dir / "checkpoint")
    main = _verdict(outcome, keep or behind.status == "fail", workdir, source, reader)
    return main, behind


def reader_class(source: SourceUnderTest, options: dict[str, str]) -> type[Any] | None:
    """The class of the reader ``source`` makes with ``options`` (``None`` when making one raises)."""
    try:
        reader = SourceUnderTest(source.source_cls, options).reader()
    except Exception:  # the source's own code: what raised is the Spark run's finding, not this lookup's
        return None
    reader.stop()
    return type(reader.impl)


def raised_result(outcome: SourceOutcome, why: str, raised: Raised) -> CheckOutcome:
    """The ``end-to-end`` failure of a source whose own code raised inside Spark (or returned what PySpark
    refused): the exception and the source's frame, one line."""
    where = "returned a value PySpark refused" if raised.returned else "raised inside Spark"
    return CheckOutcome(
        CHECK_ID,
        "fail",
        f"the source {where} and the query failed: {raised.describe()}",
        (f"Spark reported: {spark_words(why)}", f"run directory kept: {outcome.run_dir}"),
        fix="a source must answer every call Spark makes and read every range it planned, with values of its "
        "schema; run that method on the same offsets to see the traceback (the driver logs in the run directory "
        "hold Spark's copy)",
    )


def _verdict(
    outcome: SourceOutcome, keep: bool, workdir: Path, source: SourceUnderTest, reader: type[Any] | None
) -> CheckOutcome:
    fired = ", ".join(f"{k['point']} (batch {k['batch']})" for k in outcome.kills_fired) or "none"
    if outcome.stalls:
        return CheckOutcome(
            CHECK_ID,
            "fail",
            f"the query stopped making progress: after round(s) {', '.join(map(str, outcome.stalls))} the context "
            f"had added data but no new batch was planned (kills so far at {fired})",
            (f"run directory kept: {outcome.run_dir}",),
            fix="latestOffset must report new data relative to the `start` Spark passes, also in a reader created "
            "after a restart; see latest-offset-monotonic / latest-offset-stable",
            observed=("lost",),
        )
    if outcome.verdict == "unknown":
        why = (outcome.error or (outcome.result.error if outcome.result else "") or "no verdict").splitlines()
        raised = source_raised([outcome.error or "", *log_texts(outcome.run_dir)], source.source_cls.__module__, reader)
        if raised is not None:  # the subject's own code failed the query: a finding, not an infrastructure error
            return raised_result(outcome, why[0], raised)
        return CheckOutcome(
            CHECK_ID,
            "error",
            f"no verdict: {why[0].split('Traceback (most recent call last)')[0].rstrip(': ')}",
            (f"run directory kept: {outcome.run_dir}",),
            fix="see the driver logs in the run directory; a planned kill that never fired means no new batch "
            "was planned after the context added data",
        )
    result = outcome.result
    assert result is not None
    if result.verdict == "exactly-once" and not result.observed_rows and not result.expected_rows:
        return CheckOutcome(
            CHECK_ID,
            "skip",
            f"the run read 0 rows (kills at {fired}), so exactly-once was not tested: give a context that adds data, "
            "or options under which the source has data",
            (f"run directory kept: {outcome.run_dir}",),
        )
    if result.verdict == "exactly-once":
        if not keep:
            shutil.rmtree(workdir / "run", ignore_errors=True)
        return CheckOutcome(
            CHECK_ID,
            "pass",
            f"exactly-once into the parquet file sink: {result.observed_rows} rows after {len(outcome.kills_fired)} "
            f"SIGKILL(s) at {fired}; {outcome.driver_starts} driver start(s), {outcome.duration_s:.0f} s"
            + (
                f" (not killed: no data arrived by itself for batch {CONTEXTLESS_KILL_BATCH}; give a context that "
                "feeds data to test restarts)"
                if outcome.unfired
                else ""
            ),
        )
    counts = ", ".join(f"{n} {k}" for k, n in result.counts().items())
    return CheckOutcome(
        CHECK_ID,
        "fail",
        f"not exactly-once under kill/restart into an exactly-once sink: {counts} (kills at {fired})",
        (*describe_anomalies(outcome), f"run directory kept: {outcome.run_dir}"),
        fix="the source does not replay: fix the failing Spark-free checks first (offsets, determinism, ranges)",
        observed=tuple(sorted(result.counts())),
        rows=row_diff(result.anomalies) or "",
    )
