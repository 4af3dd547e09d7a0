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

import contextlib
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import assume
from hypothesis.database import ExampleDatabase
from hypothesis.errors import Unsatisfiable

from fault_injectors.plan import STEP_POINT, TIMED_POINT
from harness.chaos.bundle import write_bundle
from harness.chaos.census import CensusCache, CensusError
from harness.chaos.database import campaign_key, describe_database, open_database, saved_failures
from harness.chaos.faultfree import fault_free_bundle
from harness.chaos.profiles import Profile
from harness.chaos.result import CampaignResult, ExampleRecord
from harness.chaos.seeded import block_test, seed_only_draws
from harness.chaos.shards import Block, Shard, idle_shard_message, shard_blocks
from harness.chaos.shrinkcap import shrink_cap
from harness.chaos.strategies import chaos_specs, describe_spec
from harness.engine.between import is_inapplicable
from harness.engine.deploy import NOTHING_DEPLOYED
from harness.engine.outcome import PIPELINE_FAILED, RECOVERY_FAILED, UPGRADE_REFUSED, RunOutcome
from harness.engine.pool import DriverPool
from harness.engine.report import summary_line, to_json
from harness.engine.rundir import RunPaths
from harness.engine.runner import Runner, RunRefused
from harness.engine.spec import RunSpec
from harness.engine.trigger import parse_trigger
from harness.errors import HarnessFailure
from scenarios import get_scenario
from scenarios.base import ResourceUnavailable

#: Points whose planned faults may not come in a run without anything being wrong: a replayed batch that takes
#: fewer steps than the census, a timed kill whose query stopped sooner. An example whose only unfired faults
#: are these is discarded, not an error.
DISCARDABLE = (STEP_POINT, TIMED_POINT)


class CampaignInfraError(HarnessFailure, RuntimeError):
    """An example could not be run (not a property violation): the harness failed."""


def campaign_pool(log_dir: Path, master: str) -> DriverPool:
    """The driver pool a campaign runs its examples on when it is not lent one (the pytest plugin shares one
    such pool between a session's campaigns)."""
    # A ready standby (no warm-up query): 6 ci examples of file_sink_stateless took 0.88x the wall time of a warm
    # one on 2 cores, whose warm-up competes with the active driver (docs/bench.md).
    return DriverPool(log_dir, master, {}, standby="ready")


def _violates(outcome: RunOutcome) -> bool:
    """A finding the campaign stops at and shrinks: a violation, a pipeline whose own code raised, or a deploy Spark
    refuses (an upgrade run)."""
    return outcome.verdict in ("violated", PIPELINE_FAILED, RECOVERY_FAILED, UPGRADE_REFUSED)


def run_campaign(
    scenario_name: str,
    *,
    seed_value: int,
    profile: Profile,
    work_dir: Path,
    echo: Callable[[str], None] | None = None,
    nemesis: tuple[str, ...] = (),
    master: str = "local[2]",
    pool: DriverPool | None = None,
    steps: bool | None = None,
    shard: Shard | None = None,
    database: str | Path | ExampleDatabase | None = None,
    one_run: bool = False,
) -> CampaignResult:
    """Run ``profile.examples`` generated schedules of ``scenario_name``, block by block
    (:mod:`harness.chaos.shards`; only shard ``shard``'s blocks when given); stop at the first violation,
    shrink it, bundle it into ``work_dir``. ``pool`` lends a driver shared with other campaigns (it is left
    open); by default the campaign makes its own pool with a ready standby and closes it.

    ``database`` (a directory, ``redis://...``, ``module:ATTRIBUTE`` or an ``ExampleDatabase``; see
    :mod:`harness.chaos.database`) keeps the failures Hypothesis shrank, under this campaign's key, and
    replays the saved ones first in every block; without it the seed alone decides the examples.
    ``one_run``: all the examples as one Hypothesis run of ``seed_value`` (a ``--workers`` worker's share,
    :mod:`harness.chaos.parallel`), not blocks.

    ``steps`` (default: the scenario's ``sink_steps``) also draws ``sink.step`` faults inside the sink's
    own code, from an exact census of each drawn example's data (one fault-free run per distinct seed and
    rows, in the same driver). An example whose planned step never came (its batch took fewer steps than
    the census, which only a sink behaving differently on a replay does) is discarded, with a line saying so.
    """
    say = echo or (lambda m: print(m, file=sys.stderr, flush=True))
    scenario = get_scenario(scenario_name)
    work_dir.mkdir(parents=True, exist_ok=True)
    result = CampaignResult(scenario_name, scenario.guarantee, seed_value, profile, master=master, nemesis=nemesis)
    blocks = [Block(0, seed_value, profile.examples)] if one_run else shard_blocks(seed_value, profile.examples, shard)
    result.shard, result.blocks = (str(shard) if shard else None), [b.index for b in blocks]
    if shard is not None and not blocks:
        result.error = idle_shard_message(profile.examples, shard)
        return result
    db = database if isinstance(database, ExampleDatabase) or database is None else open_database(database)
    draws_steps = scenario.draws_sink_steps if steps is None else steps
    # A census runs the default rounds: its batches are a trigger's only for availableNow and the clock's.
    draws_steps = draws_steps and all(parse_trigger(t).census_batches for t in profile.triggers)
    db_key = campaign_key(scenario_name, profile, nemesis, master, draws_steps)
    if db is not None:
        # A database given through the API (an ExampleDatabase) has no command-line form.
        if isinstance(database, (str, Path)):
            result.database = describe_database(database)
        else:
            result.database = f"<{type(db).__name__}>"
        result.replayed_first = saved_failures(db, db_key)
        say(f"example database {result.database}: {result.replayed_first} saved failure(s) replayed first")
    planned = sum(b.examples for b in blocks)
    cache: dict[str, tuple[RunOutcome, dict[str, Any]]] = {}
    failing: list[tuple[RunOutcome, dict[str, Any], ExampleRecord]] = []
    started = time.monotonic()
    shrinking_since: list[float] = []
    own_pool = pool is None
    pool = pool or campaign_pool(work_dir / "logs", master)
    starts_before = pool.incarnations
    census = CensusCache(scenario_name, pool, work_dir, say) if draws_steps else None

    #: The first harness failure (not a property violation). It is never raised into Hypothesis, which would
    #: shrink it and save it in the shared example database: every later example is rejected instead.
    infra: list[str] = []

    def census_within_budget(seed_: int, rows: Any, batch_rows: int | None = None) -> Any:
        spent = shrinking_since and time.monotonic() - shrinking_since[0] > profile.shrink_budget_s
        # After a harness failure or past the budget, only data already counted is drawn (as in ``play``).
        if infra or spent:
            assume(census.has(seed_, rows, batch_rows))  # type: ignore[union-attr]
        try:
            return census(seed_, rows, batch_rows)  # type: ignore[misc]
        except CensusError as exc:
            infra.append(str(exc))
            assume(False)

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
        triggers=profile.triggers,
        rounds=profile.rounds,
    )

    def play(spec: RunSpec) -> None:
        key = spec.to_json()
        if key not in cache:
            # After a harness failure no new example runs; one already run (the failure being shrunk, which
            # Hypothesis plays once more at the end) is judged as before, or Hypothesis calls it flaky.
            assume(not infra)
            if shrinking_since and time.monotonic() - shrinking_since[0] > profile.shrink_budget_s:
                assume(False)  # shrink budget spent: only already-run specs are evaluated now
            index = len(result.examples) + 1
            paths = RunPaths(work_dir / f"example-{index:04d}")
            t0 = time.monotonic()
            try:
                outcome = Runner(spec, paths, echo=lambda m: None, pool=pool).execute()
            except RunRefused as exc:  # bad input (a DStream setup function): the campaign ends with its line
                infra.append(str(exc))
                assume(False)
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
            phase = "shrink" if shrinking_since else f"{index}/{planned}"
            say(f"[{phase:>7}] {record.duration_s:5.1f}s {outcome.verdict:<12} {describe_spec(spec)}")
            cache[key] = (outcome, report)
            if not _violates(outcome) and not outcome.error:
                shutil.rmtree(paths.root, ignore_errors=True)
        outcome, report = cache[key]
        if outcome.unfired and all(r.point in DISCARDABLE for r in outcome.unfired) and not _violates(outcome):
            say(f"          discarded: {'; '.join(r.describe() + r.why_unfired() for r in outcome.unfired)}")
            assume(False)
        if outcome.error and (outcome.error.startswith(NOTHING_DEPLOYED) or is_inapplicable(outcome.error)):
            say(f"          discarded: {outcome.error.splitlines()[0]}")
            assume(False)
        if outcome.error and not outcome.query_failed:
            infra.append(outcome.error)
            assume(False)
        if _violates(outcome):
            record = next(r for r in result.examples if r.spec == outcome.spec)
            failing.append((outcome, report, record))
            if not shrinking_since:
                shrinking_since.append(time.monotonic())
                say(f"violation found: {summary_line(outcome)}; shrinking (budget {profile.shrink_budget_s:.0f} s)")
            raise AssertionError(summary_line(outcome))

    shared = contextlib.ExitStack()
    try:
        share = getattr(scenario.source, "shared", None)
        if share is not None:  # e.g. one Kafka broker for every example; each run gets a topic of its own
            shared.enter_context(share(work_dir / "shared"))
        for block in blocks:
            try:
                with seed_only_draws(), shrink_cap(profile.shrink_budget_s):
                    block_test(strategy, play, block, db, db_key)()
            except Unsatisfiable:
                if not infra:
                    raise CampaignInfraError(
                        f"block {block.index} (seed {block.seed}): every example was discarded (see the lines above)"
                    ) from None
            if infra:
                raise CampaignInfraError(infra[0])
    except AssertionError as exc:
        if failing:
            outcome, report, record = failing[-1]
            result.failure, result.failure_report = record, report
            result.bundle = write_bundle(outcome, work_dir / "bundle", report)
            if infra:  # the failure found stands; say what cut its shrinking short
                say(f"shrinking stopped early: a harness failure in a shrink example: {infra[0].splitlines()[0]}")
            say("checking whether the minimal schedule violates without its faults")
            try:
                loud = outcome.verdict == RECOVERY_FAILED
                result.fault_free = fault_free_bundle(outcome.spec, work_dir, pool, _violates, say, loud_too=loud)
            except Exception as why:  # the failure found and bundled stands; this check only explains it
                say(f"fault-free check could not run: {type(why).__name__}: {why}")
        else:
            result.error = f"the campaign failed outside its examples: {exc}"
    except (CampaignInfraError, CensusError, ResourceUnavailable, RunRefused) as exc:
        result.error = str(exc)
    finally:
        shared.close()
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
