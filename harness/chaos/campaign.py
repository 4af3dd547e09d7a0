"""Chaos campaigns: Hypothesis draws whole schedules, the runner plays them
against real drivers, a violation is shrunk to a minimal schedule and saved
as a replay bundle.

Cost-aware: all examples share one driver process (one SparkSession); only a
hard kill pays for a new JVM. Each example gets a fresh run directory (fresh
checkpoint and sink output), so examples are independent and Hypothesis sees
no flakiness. Identical specs are run once (results are cached), and
shrinking stops after the profile's time budget (the minimal failure found by
then is reported).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, assume, given, seed, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from fault_injectors.plan import STEP_POINT, TIMED_POINT
from harness.chaos.bundle import write_bundle
from harness.chaos.census import CensusCache, CensusError
from harness.chaos.profiles import Profile
from harness.engine.outcome import RunOutcome
from harness.engine.pool import DriverPool
from harness.engine.report import campaign_tail, summary_line, to_json
from harness.engine.rundir import RunPaths
from harness.engine.runner import Runner
from harness.engine.spec import RunSpec
from scenarios import get_scenario
from scenarios.strategies import chaos_specs, describe_spec

#: Points whose planned faults may not come in a run without anything being wrong: a replayed batch that takes
#: fewer steps than the census, a timed kill whose query stopped sooner. An example whose only unfired faults
#: are these is discarded, not an error.
DISCARDABLE = (STEP_POINT, TIMED_POINT)


class CampaignInfraError(RuntimeError):
    """An example could not be run (not a property violation): the harness failed."""


@dataclass
class ExampleRecord:
    index: int
    spec: RunSpec
    verdict: str
    counts: dict[str, int]
    faults_fired: list[str]
    duration_s: float
    summary: str


@dataclass
class CampaignResult:
    scenario: str
    guarantee: str
    seed: int
    profile: Profile
    examples: list[ExampleRecord] = field(default_factory=list)
    failure: ExampleRecord | None = None
    failure_report: dict[str, Any] | None = None
    bundle: Path | None = None
    error: str | None = None
    driver_starts: int = 0
    duration_s: float = 0.0
    #: Worker processes the examples were split over (:mod:`harness.chaos.parallel`).
    workers: int = 1
    master: str = "local[2]"
    #: Fault-free census runs taken to draw ``sink.step`` faults, and their wall time.
    census_runs: int = 0
    census_s: float = 0.0

    @property
    def verdict(self) -> str:
        if self.error:
            return "unknown"
        return "violated" if self.failure else "exactly-once"

    @property
    def exit_code(self) -> int:
        return {"exactly-once": 0, "violated": 1}.get(self.verdict, 2)

    def assert_exactly_once(self) -> None:
        """Raise ``AssertionError`` with the campaign report unless no violation was found."""
        if self.verdict != "exactly-once":
            raise AssertionError(render_campaign(self))

    def render(self, *, color: bool = False) -> str:
        """The campaign report (:func:`render_campaign`)."""
        return render_campaign(self, color=color)

    @property
    def subject_name(self) -> str:
        return self.scenario


def _violates(outcome: RunOutcome) -> bool:
    return outcome.verdict == "violated"


def run_campaign(
    scenario_name: str,
    *,
    seed_value: int,
    profile: Profile,
    work_dir: Path,
    echo: Callable[[str], None] | None = None,
    database_dir: Path | None = None,
    nemesis: tuple[str, ...] = (),
    master: str = "local[2]",
    pool: DriverPool | None = None,
    steps: bool | None = None,
) -> CampaignResult:
    """Run ``profile.examples`` generated schedules of ``scenario_name``; stop at
    the first violation, shrink it, bundle it into ``work_dir``. ``pool`` lends
    a driver shared with other campaigns (it is left open); by default the
    campaign makes its own pool with a warm standby and closes it.

    ``steps`` (default: the scenario's ``sink_steps``) also draws ``sink.step`` faults inside the sink's
    own code, from an exact census of each drawn example's data (one fault-free run per distinct seed and
    rows, in the same driver). An example whose planned step never came (its batch took fewer steps than
    the census, which only a sink behaving differently on a replay does) is discarded, with a line saying so.
    """
    say = echo or (lambda m: print(m, file=sys.stderr, flush=True))
    scenario = get_scenario(scenario_name)
    work_dir.mkdir(parents=True, exist_ok=True)
    result = CampaignResult(scenario_name, scenario.guarantee, seed_value, profile, master=master)
    cache: dict[str, tuple[RunOutcome, dict[str, Any]]] = {}
    failing: list[tuple[RunOutcome, dict[str, Any], ExampleRecord]] = []
    started = time.monotonic()
    shrinking_since: list[float] = []
    own_pool = pool is None
    pool = pool or DriverPool(work_dir / "logs", master, {}, standby=True)
    starts_before = pool.incarnations
    census = (
        CensusCache(scenario_name, pool, work_dir, say) if (scenario.sink_steps if steps is None else steps) else None
    )

    def census_within_budget(seed_: int, rows: Any, batch_rows: int | None = None) -> Any:
        spent = shrinking_since and time.monotonic() - shrinking_since[0] > profile.shrink_budget_s
        assume(not spent or census.has(seed_, rows, batch_rows))  # type: ignore[union-attr]
        return census(seed_, rows, batch_rows)  # type: ignore[misc]

    strategy = chaos_specs(
        scenario,
        max_rounds=profile.max_rounds,
        max_faults=profile.max_faults,
        hard_kill_ratio=profile.hard_kill_ratio,
        nemesis=nemesis,
        master=master,
        ref=scenario_name,
        steps=None if census is None else census_within_budget,
        timed=profile.timed_kills,
        volume=profile.volume,
        batch_rows=profile.batch_rows,
    )

    def play(spec: RunSpec) -> None:
        key = spec.to_json()
        if key not in cache:
            if shrinking_since and time.monotonic() - shrinking_since[0] > profile.shrink_budget_s:
                assume(False)  # shrink budget spent: only already-run specs are evaluated now
            index = len(result.examples) + 1
            paths = RunPaths(work_dir / f"example-{index:04d}")
            t0 = time.monotonic()
            outcome = Runner(spec, paths, echo=lambda m: None, pool=pool).execute()
            report = to_json(outcome)
            record = ExampleRecord(
                index,
                spec,
                outcome.verdict,
                report["anomaly_counts"],
                [k["description"] for k in outcome.kills_fired],
                time.monotonic() - t0,
                summary_line(outcome),
            )
            result.examples.append(record)
            phase = "shrink" if shrinking_since else f"{index}/{profile.examples}"
            say(f"[{phase:>7}] {record.duration_s:5.1f}s {outcome.verdict:<12} {describe_spec(spec)}")
            cache[key] = (outcome, report)
            if not _violates(outcome) and not outcome.error:
                shutil.rmtree(paths.root, ignore_errors=True)
        outcome, report = cache[key]
        if outcome.unfired and all(r.point in DISCARDABLE for r in outcome.unfired) and not _violates(outcome):
            say(f"          discarded: {'; '.join(r.describe() + r.why_unfired() for r in outcome.unfired)}")
            assume(False)
        if outcome.error and not outcome.query_failed:
            raise CampaignInfraError(outcome.error)
        if _violates(outcome):
            record = next(r for r in result.examples if r.spec == outcome.spec)
            failing.append((outcome, report, record))
            if not shrinking_since:
                shrinking_since.append(time.monotonic())
                say(f"violation found: {summary_line(outcome)}; shrinking (budget {profile.shrink_budget_s:.0f} s)")
            raise AssertionError(summary_line(outcome))

    test = given(strategy)(play)
    test = settings(
        max_examples=profile.examples,
        deadline=None,
        database=DirectoryBasedExampleDatabase(str(database_dir)) if database_dir and not profile.derandomize else None,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        print_blob=False,
    )(test)
    test = seed(seed_value)(test)
    try:
        test()
    except AssertionError:
        outcome, report, record = failing[-1]
        result.failure, result.failure_report = record, report
        result.bundle = write_bundle(outcome, work_dir / "bundle", report)
    except (CampaignInfraError, CensusError) as exc:
        result.error = str(exc)
    finally:
        result.driver_starts = pool.incarnations - starts_before
        if census is not None:
            result.census_runs, result.census_s = census.runs, census.seconds
        if own_pool:
            pool.close()
        result.duration_s = time.monotonic() - started
    return result


def replay_bundle_campaign(bundle: Path, profile: Profile, work_dir: Path) -> CampaignResult:
    """Replay a saved bundle as a one-example campaign (``failure`` set if it still violates)."""
    from harness.chaos.bundle import load_bundle

    spec, _ = load_bundle(bundle)
    scenario = get_scenario(spec.scenario)
    result = CampaignResult(spec.scenario, scenario.guarantee, spec.seed, profile)
    started = time.monotonic()
    with DriverPool(work_dir / "logs", spec.master, spec.confs) as pool:
        outcome = Runner(spec, RunPaths(work_dir / "replay"), echo=lambda m: None, pool=pool).execute()
        result.driver_starts = pool.incarnations
    report = to_json(outcome)
    record = ExampleRecord(
        1,
        spec,
        outcome.verdict,
        report["anomaly_counts"],
        [k["description"] for k in outcome.kills_fired],
        time.monotonic() - started,
        summary_line(outcome),
    )
    result.examples.append(record)
    if outcome.error and not outcome.query_failed:
        result.error = outcome.error
    elif _violates(outcome):
        result.failure, result.failure_report, result.bundle = record, report, bundle
    result.duration_s = time.monotonic() - started
    return result


def axes_exercised(result: CampaignResult) -> dict[str, Counter[str]]:
    """How often each state-store axis value ran (stateful scenarios; empty otherwise)."""
    if not result.examples or not get_scenario(result.scenario).stateful:
        return {}
    specs = [r.spec for r in result.examples]
    return {
        "store": Counter(s.state_store or "hdfs" for s in specs),
        "format": Counter(f"v{s.checkpoint_format or 1}" for s in specs),
        "partitions": Counter(f"{s.shuffle_partitions or 2}p" for s in specs),
    }


def _axes_line(result: CampaignResult) -> list[str]:
    axes = axes_exercised(result)
    if not axes:
        return []
    text = "; ".join(", ".join(f"{k} x{v}" for k, v in sorted(c.items())) for c in axes.values())
    return [f"  state axes        {text}"]


def render_campaign(result: CampaignResult, *, color: bool = False) -> str:
    """The final table: a summary line, counts, fault points exercised, the minimal failure's rows side by
    side (chispa; ``color`` for a terminal), and the replay command."""
    n = len(result.examples)
    verdicts = Counter(r.verdict for r in result.examples)
    points = Counter(_point_of(f) for r in result.examples for f in r.faults_fired if _point_of(f))
    per_min = n / (result.duration_s / 60) if result.duration_s else 0.0
    fired = ", ".join(f"{k} x{v}" for k, v in sorted(points.items()))
    ctx = f"(scenario={result.scenario}, seed={result.seed}, profile={result.profile.name})"
    if result.error:
        head = f"campaign error, no verdict {ctx}: {result.error.splitlines()[0]}"
    elif result.failure:
        faults = len(result.failure.spec.extra_faults) + len(result.failure.spec.nemesis)
        expected = " (expected: this sink is at-least-once)" if result.guarantee != "exactly-once" else ""
        head = f"violation found and shrunk to {faults} fault step(s){expected} {ctx}"
    else:
        head = f"no violation in {n} example(s) {ctx}"
    lines = [
        head,
        f"  examples run      {n} ({', '.join(f'{v} {k}' for k, v in sorted(verdicts.items()))})",
        f"  faults fired      {sum(points.values())} ({fired or '-'})",
        f"  driver starts     {result.driver_starts} (JVMs; soft faults reuse the running one)",
        *_axes_line(result),
        *(
            [f"  step censuses     {result.census_runs} fault-free run(s), {result.census_s:.0f} s (sink.step faults)"]
            if result.census_runs
            else []
        ),
        f"  wall time         {result.duration_s:.0f} s ({per_min:.1f} examples/min)",
    ]
    if result.failure:
        lines += [f"  minimal schedule  {describe_spec(result.failure.spec)}", f"  {result.failure.summary}"]
    rerun = (
        f".venv/bin/python -m harness chaos {result.scenario} --examples {result.profile.examples} "
        f"--seed {result.seed} --profile {result.profile.name}"
        + (f" --workers {result.workers}" if result.workers > 1 else "")
        + (f" --master {result.master}" if result.master != "local[2]" else "")
        + (f" --volume {result.profile.volume}" if result.profile.volume is not None else "")
        + (f" --batch-rows {result.profile.batch_rows}" if result.profile.batch_rows is not None else "")
    )
    anomalies = (result.failure_report or {}).get("anomalies", []) if result.failure else []
    lines += campaign_tail(anomalies, result.bundle, rerun, color=color)
    return "\n".join(lines)


def _point_of(fault: str) -> str:
    """The crash point of a fired fault's description (``sink.step`` for ``... after step K of batch N ...``)."""
    if " after step " in fault:
        return STEP_POINT
    if "(timed, not deterministic)" in fault:
        return TIMED_POINT
    return fault.split(" at ")[1].split(" of ")[0] if " at " in fault else ""
