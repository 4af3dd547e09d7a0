"""The ``end-to-end`` source check: the source under real SIGKILLs feeding the
parquet file sink must be exactly-once.

The file sink is exactly-once on its own (its ``_spark_metadata`` log hides
files of uncommitted attempts), so any lost, duplicated or changed row comes
from the source: offsets that do not replay, reads that differ on a replay,
data that moved. The run (:func:`harness.conformance.stream_runs.run_stream`)
feeds one round of data through the external context per kill and kills the
driver at ``after_offsets_logged`` (the batch is re-run from its logged
offsets), ``after_commit_logged`` (the next batch starts from the committed
offset in a new process) and ``sink.commit.after`` (a committed batch is
re-planned), one kill per round. Expected rows are the source's own rows of
``[initialOffset, final checkpointed offset)``, read in the driver.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from harness.conformance.contexts import ContextFactory, feeds_data
from harness.conformance.loading import Ref, add_import_root
from harness.conformance.reader import SourceUnderTest
from harness.conformance.results import CheckResult
from harness.conformance.stream_runs import StreamOutcome, run_stream
from harness.rowdiff import row_diff

KILL_POINTS = ("after_offsets_logged", "after_commit_logged", "sink.commit.after")
CHECK_ID = "end-to-end"
MAX_EXAMPLES = 6


def describe_anomalies(outcome: StreamOutcome) -> list[str]:
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
) -> CheckResult:
    """Run the check in ``workdir`` (kept on failure or with ``keep``)."""
    from harness.conformance.source_suite import make_context

    add_import_root(ref.root)
    ctx = make_context(context, workdir / "context")
    try:
        rounds, points = max(2, kills), KILL_POINTS[: max(0, kills)]
        if not feeds_data(ctx):
            rounds, points = 1, points[:1]
        options = {**{str(k): str(v) for k, v in ctx.options().items()}, **source.options}
        spec = {"kind": "python", "format": source.name, "options": options, "python_ref": [ref.module, ref.attr]}

        def feed(r: int) -> dict[str, int]:
            ctx.add_data(batch_rows)
            return {"rows": batch_rows}

        outcome = run_stream(workdir / "run", spec, feed, rounds, points, echo)
    finally:
        ctx.close()
    fired = ", ".join(f"{k['point']} (batch {k['batch']})" for k in outcome.kills_fired) or "none"
    if outcome.stalls:
        return CheckResult(
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
        return CheckResult(
            CHECK_ID,
            "error",
            f"no verdict: {why[0]}",
            (*why[1:6], f"run directory kept: {outcome.run_dir}"),
            fix="see the driver logs in the run directory; a planned kill that never fired means no new batch "
            "was planned after the context added data",
        )
    result = outcome.result
    assert result is not None
    if result.verdict == "exactly-once":
        if not keep:
            shutil.rmtree(workdir / "run", ignore_errors=True)
        return CheckResult(
            CHECK_ID,
            "pass",
            f"exactly-once into the parquet file sink: {result.observed_rows} rows after {len(outcome.kills_fired)} "
            f"SIGKILL(s) at {fired}; {outcome.driver_starts} driver start(s), {outcome.duration_s:.0f} s",
        )
    counts = ", ".join(f"{n} {k}" for k, n in result.counts().items())
    return CheckResult(
        CHECK_ID,
        "fail",
        f"not exactly-once under kill/restart into an exactly-once sink: {counts} (kills at {fired})",
        (*describe_anomalies(outcome), f"run directory kept: {outcome.run_dir}"),
        fix="the source does not replay: fix the failing Spark-free checks first (offsets, determinism, ranges)",
        observed=tuple(sorted(result.counts())),
        rows=row_diff(result.anomalies) or "",
    )
