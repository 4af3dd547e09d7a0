"""The ``crash-points`` sink check: one harness run with one fault per crash point.

Point *i* fires in batch *i* (batch ids predicted by the schedule, as
``tests/integration/test_reference_sinks.py`` does), so every anomaly the
checker finds is attributed to exactly one fault. Fault modes: ``hard``
(SIGKILL of the driver's process groups at every point: a new JVM each, about
15-20 s here), ``soft`` (``raise`` at every point: a task or query failure, the
query restarts in the same driver, 1-2 s; Spark calls ``abort`` where it
would), ``mixed`` (the default: SIGKILL at ``sink.write.mid`` and
``sink.commit.after``, where a dead process differs most from an exception;
``raise`` elsewhere; on a pool that hosts the JVM, the SIGKILL at a point a ``foreachBatch`` function's
wrapper fires in the driver's Python process takes that process alone: ``kill_python``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.actions import KILL, KILL_PYTHON, RAISE
from fault_injectors.plan import STEP_POINT, FaultRule
from fault_injectors.registry import verb as action_verb
from fault_injectors.sinks import FOREACH_BATCH_POINTS
from harness.conformance.results import CheckOutcome
from harness.conformance.sink.checks import SinkProbe, judge
from harness.conformance.sink.scenario import SINK_POINTS, build, exported

if TYPE_CHECKING:
    from harness.engine.pool import DriverPool

MODES = ("mixed", "soft", "hard")
HARD_IN_MIXED = ("sink.write.mid", "sink.commit.after")
CHECK_ID = "crash-points"


def action_for(point: str, mode: str, python_points: Collection[str] = ()) -> str:
    """The action at ``point`` under ``mode``; a kill at one of ``python_points`` (fired in the driver's Python
    process, its JVM hosted apart) kills that process alone under ``mixed``."""
    if mode not in MODES:
        raise ValueError(f"--faults {mode!r}: choose one of {', '.join(MODES)}")
    hard = mode == "hard" or (mode == "mixed" and point in HARD_IN_MIXED)
    if hard and mode == "mixed" and point in python_points:
        return KILL_PYTHON.name
    return KILL.name if hard else RAISE.name


def plan_rules(
    config: dict[str, Any], points: Sequence[str], mode: str, seed: int, python_points: Collection[str] = ()
) -> tuple[list[FaultRule], int]:
    """One rule per point, point *i* at batch *i*; and the rounds of data that make enough batches."""
    from harness.engine.schedule import build_schedule, rules_per_point
    from harness.engine.spec import RunSpec

    scenario = build(config)
    rounds = 1
    while len(build_schedule(RunSpec("x", seed, 0, rounds), scenario).predicted_batches) < len(points):
        rounds += 1
    batches = build_schedule(RunSpec("x", seed, 0, rounds), scenario).predicted_batches
    rules = rules_per_point(
        points, batches, scenario.rows_per_offset, action=lambda point: action_for(point, mode, python_points)
    )
    return rules, rounds


def outcome_rows(outcome: Any) -> str:
    """The run's disagreeing rows side by side (chispa, plain text), or ``""``."""
    from harness.verdict.rowdiff import row_diff

    return (row_diff(outcome.result.anomalies) if outcome.result else None) or ""


def per_point(outcome: Any) -> tuple[list[str], Counter[str]]:
    """Evidence lines per fired fault and the anomaly kinds (rows) attributed to it."""
    lines: list[str] = []
    kinds: Counter[str] = Counter()
    anomalies = outcome.result.anomalies if outcome.result else []
    for k in outcome.kills_fired:
        mine = [a for a in anomalies if a.fault and a.fault.history_index == k["history_index"]]
        counts = Counter(a.kind for a in mine)
        kinds.update(counts)
        verb = action_verb(k["action"])
        what = ", ".join(f"{n} {kind}" for kind, n in counts.items()) or "nothing lost or duplicated"
        if k["point"] == STEP_POINT:  # "<id>: kill after step K of batch N in W: file:line fn -> callee"
            lines.append(f"{k['description'].split(': ', 1)[-1]}: {what}")
        else:
            lines.append(f"{k['point']} ({verb}, batch {k['batch']}): {what}")
    stray = [a for a in anomalies if a.fault is None]
    if stray:
        kinds.update(a.kind for a in stray)
        lines.append(f"{len(stray)} anomalous row(s) before any fault: {Counter(a.kind for a in stray)}")
    return lines, kinds


def run_crash_points(
    probe: SinkProbe,
    config: dict[str, Any],
    workdir: Path,
    *,
    points: Sequence[str] = SINK_POINTS,
    mode: str = "mixed",
    seed: int = 5,
    timeout_s: float = 300.0,
    echo: Callable[[str], None] = print,
    pool: DriverPool | None = None,
) -> tuple[CheckOutcome, dict[str, Any]]:
    """Run the campaign; returns the check result and a summary for the report. ``pool`` lends the command's
    drivers; when it hosts the JVM, a foreachBatch function's hard kills around it take its Python alone."""
    from harness.engine.runner import HarnessError, run_spec
    from harness.engine.spec import RunSpec

    unknown = sorted(set(points) - set(SINK_POINTS))
    if unknown:
        raise ValueError(f"--points {unknown}: not crash points a sink reaches; known: {', '.join(SINK_POINTS)}")
    hosted = pool is not None and pool.host_jvm and probe.sink.kind == "foreach_batch"
    rules, rounds = plan_rules(config, points, mode, seed, FOREACH_BATCH_POINTS if hosted else ())
    run_dir = Path(workdir) / "campaign"
    with exported(config) as ref:
        spec = RunSpec(ref, seed, 0, rounds, tuple(rules), command_timeout_s=timeout_s)
        try:
            outcome = run_spec(spec, run_dir, echo, pool=pool)
        except HarnessError as exc:
            return CheckOutcome(CHECK_ID, "error", f"the campaign could not run: {exc}"), {}
    lines, kinds = per_point(outcome)
    summary = {"run_dir": str(run_dir), "mode": mode, "faults": len(rules), "anomalies": dict(kinds)}
    if outcome.failure is not None:  # the sink's own code raised and failed the query: a finding, with its cause
        return CheckOutcome(CHECK_ID, "fail", f"the sink raised inside Spark: {outcome.failure.describe()}",
                            (f"run directory: {run_dir}",)), summary  # fmt: skip
    if outcome.recovery is not None:  # Spark could not resume the query with this sink after a crash
        return CheckOutcome(CHECK_ID, "fail", f"the query did not recover: {outcome.recovery.describe()}",
                            (f"run directory: {run_dir}",)), summary  # fmt: skip
    if outcome.verdict == "unknown":
        why = (outcome.error or (outcome.result.error if outcome.result else "") or "no verdict").splitlines()
        return (
            CheckOutcome(CHECK_ID, "error", f"no verdict: {why[0]}", (*why[1:5], f"run directory: {run_dir}")),
            summary,
        )
    found = [(kind, f"{n} {kind} row(s)") for kind, n in kinds.items()]
    ok = f"{len(rules)} fault(s), one per crash point ({mode}): the output stayed exactly-once at every one"
    result = judge(
        probe,
        CHECK_ID,
        found,
        ok,
        f"faults at crash points changed what readers see ({', '.join(f'{n} {k}' for k, n in kinds.items())} rows)",
        "make the replay of a batch (same id, same rows) a no-op, and publish atomically in commit()",
    )
    result = dataclasses.replace(
        result,
        details=(*lines, f"run directory: {run_dir}"),
        observed=tuple(sorted(kinds)),
        rows=outcome_rows(outcome),
    )
    return result, summary
