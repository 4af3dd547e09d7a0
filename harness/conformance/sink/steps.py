"""The ``crash-anywhere`` sink check: a kill at each effect boundary of the sink's own code.

A fault-free census run (:mod:`harness.chaos.census`) records the steps the sink's
code takes in a census batch (batch 1, past the first batch's set-up), and
:mod:`fault_injectors.effects` tells its effect boundaries: the step before the
first effect and every effect (one kill per run of effect-free steps; a kill after
a ``Row`` read repeats the kill after the step before it). Then one harness run
kills the query once per chosen step, step *i* in batch *i* + 1 of a schedule
whose batches all carry the same number of rows as the census batch, so each batch
takes the same steps and every anomaly the checker finds is attributed to exactly
one step. Every boundary is tried when they fit ``steps``; only beyond it is a
seeded sample taken (``None``: no cap). ``every_step`` aims at every step instead
of the boundaries. ``batch_rows`` sets the rows of a batch (default: the sink
scenario's). Fault modes as for ``crash-points``: ``soft`` raises after the step,
``mixed`` and ``hard`` SIGKILL the driver's process groups. The summary says, for
the census batch, how many steps, boundaries and kills there were.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.actions import KILL, KILL_PYTHON, RAISE
from fault_injectors.plan import DRIVER_PYTHON_WRAPPERS
from harness.conformance.results import CheckOutcome
from harness.conformance.sink.campaign import MODES, outcome_rows, per_point
from harness.conformance.sink.checks import SinkProbe, judge
from harness.conformance.sink.scenario import build, exported

if TYPE_CHECKING:
    from harness.engine.pool import DriverPool

CHECK_ID = "crash-anywhere"
#: Default cap on the kills (``--steps``): beyond it, a seeded sample of a census batch's boundaries.
DEFAULT_STEPS = 30
CENSUS_BATCH = 1


def uniform_round(config: dict[str, Any], batch_rows: int | None = None) -> tuple[int, ...]:
    """Offsets per partition that make one full batch per round, the same size every round (``batch_rows``
    rows a batch, as ``RunSpec.batch_rows``; default the scenario's)."""
    scenario = build(config)
    offsets = scenario.batch_limit_for(batch_rows) if batch_rows is not None else None
    per = max(1, (offsets or scenario.max_offsets_per_batch) // scenario.partitions)
    return tuple(per for _ in range(scenario.partitions))


def run_crash_anywhere(
    probe: SinkProbe,
    config: dict[str, Any],
    workdir: Path,
    *,
    steps: int | None = DEFAULT_STEPS,
    wrappers: Sequence[str] = (),
    mode: str = "mixed",
    seed: int = 5,
    timeout_s: float = 300.0,
    echo: Callable[[str], None] = print,
    every_step: bool = False,
    batch_rows: int | None = None,
    pool: DriverPool | None = None,
) -> tuple[CheckOutcome, dict[str, Any]]:
    """Census, then one run with a kill after each chosen step; the check result and a summary (``census_steps``,
    ``boundaries``, ``steps_tried``, ...). ``pool`` lends the command's drivers (its JVM hosted apart, for
    ``kill_python``); without it the check makes its own."""
    from harness.chaos.census import CensusError, sample_targets, step_rules, take_census
    from harness.engine.pool import DriverPool, DriverStartError
    from harness.engine.runner import HarnessError, run_spec
    from harness.engine.spec import RunSpec

    if mode not in MODES:
        raise ValueError(f"--faults {mode!r}: choose one of {', '.join(MODES)}")
    if steps is not None and steps < 1:
        raise ValueError("--steps must be >= 1 (or 'all')")
    if batch_rows is not None and batch_rows < 1:
        raise ValueError("--batch-rows must be >= 1")
    one = uniform_round(config, batch_rows)
    with exported(config) as ref:
        try:
            census = take_census(
                ref, seed, rows=[one, one], batch_rows=batch_rows, run_dir=Path(workdir) / "census",
                echo=lambda m: None, pool=pool,
            )  # fmt: skip
        except (CensusError, HarnessError) as exc:
            return CheckOutcome(CHECK_ID, "error", f"the census run could not run: {exc}"), {}
        if pool is not None:
            pool.retire()  # the kills start on a driver process with nothing of the census in it
        targets = [t for t in census.targets(CENSUS_BATCH) if not wrappers or t[0] in wrappers]
        if not targets:
            only = f" in {', '.join(wrappers)}" if wrappers else ""
            return CheckOutcome(CHECK_ID, "skip", f"the sink's own code took no step{only} in batch {CENSUS_BATCH}"), {}
        bounds = [t for t in census.boundary_targets(CENSUS_BATCH) if not wrappers or t[0] in wrappers]
        later = () if every_step else census.inside_effects(CENSUS_BATCH)
        chosen = sample_targets(targets if every_step else bounds, steps, seed, later)
        # A foreachBatch function runs in the driver's Python process: under the default mode a kill of that
        # process alone (its JVM hosted apart, alive) does to the function and to Spark's checkpoint what the
        # whole driver's death does, at a fraction of the restart (docs/conformance.md, "kill_python").
        in_python = all(t[0] in DRIVER_PYTHON_WRAPPERS for t in chosen)
        python_only = mode == "mixed" and in_python and (pool is None or pool.host_jvm)
        action = RAISE.name if mode == "soft" else KILL_PYTHON.name if python_only else KILL.name
        rules = step_rules(lambda i: i + CENSUS_BATCH, chosen, action)
        counted = f"{len(targets)} step(s), {len(bounds)} effect boundary(ies) of batch {CENSUS_BATCH}"
        aim = "every step" if every_step else "boundaries"
        fault = "exception" if mode == "soft" else "SIGKILL of the driver's Python" if python_only else "SIGKILL"
        echo(f"check-sink: {CHECK_ID}: {counted}; {len(chosen)} tried ({aim}), one {fault} each")
        run_dir = Path(workdir) / "crash-anywhere"
        rows = tuple(one for _ in range(len(chosen) + CENSUS_BATCH))
        spec = RunSpec(
            ref, seed, 0, rows=rows, batch_rows=batch_rows, extra_faults=tuple(rules), command_timeout_s=timeout_s
        )
        try:
            # Kills come every few seconds: a warm standby never gets ahead of them on 2 cores (measured slower).
            if pool is not None:
                outcome = run_spec(spec, run_dir, echo, pool=pool)
            else:
                with DriverPool(run_dir / "logs", spec.master, spec.confs, host_jvm=python_only) as own:
                    outcome = run_spec(spec, run_dir, echo, pool=own)
        except (HarnessError, DriverStartError) as exc:
            return CheckOutcome(CHECK_ID, "error", f"the campaign could not run: {exc}"), {}
    lines, kinds = per_point(outcome)
    tried = [f"{w}{'' if p is None else f'[p{p}]'} step {k}: {d}" for w, p, k, d in chosen]
    summary = {
        "run_dir": str(run_dir),
        "mode": mode,
        "census_batch": CENSUS_BATCH,
        "census_steps": len(targets),
        "boundaries": len(bounds),
        "boundary_steps": [f"{w}{'' if p is None else f'[p{p}]'} step {k}: {d}" for w, p, k, d in bounds],
        "every_step": every_step,
        "batch_rows": batch_rows,
        "steps_tried": tried,
        "anomalies": dict(kinds),
    }
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
    drift = _drift(outcome.kills_fired, chosen)
    if drift:
        return (
            CheckOutcome(
                CHECK_ID,
                "error",
                "the sink's steps differ between two runs of the same batch, so kills cannot be aimed at them",
                (*drift[:5], f"run directory: {run_dir}"),
                fix="make the sink's code take the same calls for the same rows (no set or dict order of "
                "unordered data, no first-call-only work), or name the steady wrapper with --wrappers",
            ),
            summary,
        )
    found = [(kind, f"{n} {kind} row(s)") for kind, n in kinds.items()]
    ok = f"{counted}: {len(chosen)} tried, a fault after each: the output stayed exactly-once after every one"
    culprits = [line for line in lines if not line.endswith("nothing lost or duplicated")]
    result = judge(
        probe,
        CHECK_ID,
        found,
        ok,
        f"a fault between two statements of the sink's code changed what readers see "
        f"({', '.join(f'{n} {k}' for k, n in kinds.items())} rows){': ' + culprits[0] if culprits else ''} "
        f"[{counted}: {len(chosen)} tried]",
        "make the rows and the batch's 'done' marker one atomic write (one transaction, one rename), or make "
        "every write idempotent on the rows' identity, so that a replay after any step changes nothing",
    )
    details = (*culprits, *[line for line in lines if line not in culprits], f"run directory: {run_dir}")
    return dataclasses.replace(
        result, details=details, observed=tuple(sorted(kinds)), rows=outcome_rows(outcome)
    ), summary


def _drift(fired: Sequence[dict[str, Any]], chosen: Sequence[tuple[str, int | None, int, str]]) -> list[str]:
    """Faults whose step, described where it fired, is not the census's step it was aimed at (target *i* is
    planned in batch *i* + :data:`CENSUS_BATCH`)."""
    out = []
    for k in fired:
        n = int(k["batch"]) - CENSUS_BATCH if k.get("batch") is not None else -1
        got = k.get("context", {}).get("description")
        if 0 <= n < len(chosen) and got is not None and got != chosen[n][3]:
            out.append(f"batch {k['batch']} step {chosen[n][2]}: census '{chosen[n][3]}', at the fault '{got}'")
    return out
