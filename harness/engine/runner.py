"""The runner: interprets a schedule against real child driver processes.

Soft state lives in the run directory (tap, checkpoint, sink output, fault
ledger); a driver that is SIGKILLed by a planned fault is replaced by a fresh
one that restarts the query from the same checkpoint, and the interrupted
command is sent again. Every step, batch and fault becomes a history event.
A watchdog kills a driver that stays silent past ``spec.command_timeout_s``.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fault_injectors.crash import never_fired, read_ledger
from fault_injectors.nemesis import NemesisError, checkpoint_nemeses
from fault_injectors.plan import PURGE_POINT, SNAPSHOT_POINT
from fault_injectors.registry import action
from harness.engine.between import (
    Applied,
    NemesisFailed,
    allowed_losses,
    allowed_replays,
    apply_between_runs,
    inapplicable,
    loss_first,
)
from harness.engine.conductor import Conductor, HarnessError, QueryFailedError, RunRefused
from harness.engine.deploy import (
    DEPLOY_POINT,
    Deployed,
    check_ran,
    first_v2_batch,
    read_deployed,
    refusal,
    snapshot_logs,
)
from harness.engine.epochs import round_target, write_target
from harness.engine.history import History
from harness.engine.jobs import run_job
from harness.engine.old_spark import SPARK_UPGRADE, OldSparkError, run_round
from harness.engine.outcome import PipelineFailure, RunOutcome, pipeline_failure, recovery_failure
from harness.engine.pool import DriverPool, Standby, standby_for_kills
from harness.engine.rundir import RunPaths, safe_name
from harness.engine.schedule import Op, OpKind, Schedule, build_schedule
from harness.engine.spec import RunSpec
from harness.engine.trigger import run_trigger
from harness.inspector import batch_ids, latest_batch_id, summarize
from harness.inspector.boundaries import STATE_PURGE, STATE_SNAPSHOT, batch_boundaries
from harness.verdict.allowed import allow_losses, allow_replays
from harness.verdict.check import batches_json, check_run_dir
from harness.verdict.checker import CheckResult, FaultRef
from harness.verdict.deploy_marks import mark_deploy
from harness.verdict.dstream_marks import dstream_batches_json
from harness.verdict.raised import ref_roots
from harness.verdict.state_check import StateCheck, check_final_state
from scenarios import get_scenario
from scenarios.base import ResourceUnavailable
from scenarios.tap import advance, init_tap

__all__ = ["HarnessError", "QueryFailedError", "RunRefused", "Runner", "run_spec"]


class Runner:
    """Plays one spec in one run directory. ``pool`` lends the child driver
    (a campaign shares one across runs); without it the runner makes its own
    and closes it at the end."""

    def __init__(
        self, spec: RunSpec, paths: RunPaths, echo: Callable[[str], None], pool: DriverPool | None = None
    ) -> None:
        self.spec, self.paths, self._echo = spec, paths, echo
        self.scenario = get_scenario(spec.scenario)
        self.schedule: Schedule = build_schedule(spec, self.scenario)
        #: Scheduled job runs (``available-now``/``once``): a killed job is over (:mod:`harness.engine.jobs`).
        self.trigger = run_trigger(spec, self.scenario)
        self.scheduled = self.trigger.scheduled
        self.jobs = 0
        self.state_check: StateCheck | None = None
        self._own_pool = pool is None
        #: The pool's standby serves the plan's driver kills only (``run_spec``'s default): none after the last.
        self.standby_for_kills = False
        self.pool = pool or DriverPool(paths.logs, spec.master, spec.confs)
        if (self.pool.master, self.pool.confs) != (spec.master, dict(spec.confs)):
            raise HarnessError(
                f"spec wants master {spec.master!r} and confs {spec.confs}, the driver pool has "
                f"{self.pool.master!r} and {self.pool.confs}"
            )
        if paths.history.exists():
            raise HarnessError(
                f"run directory {paths.root} already holds a run ({paths.history.name}); give each run a new directory"
            )
        self.started = time.monotonic()
        self.history: History | None = None
        self.conductor: Conductor | None = None
        #: The nemesis actions applied so far (checkpoint and source).
        self.nemeses: list[Applied] = []
        #: The round the schedule has reached (its ``add_data`` ops so far), and whether it has healed.
        self._round, self._healed = 0, False

    def echo(self, message: str) -> None:
        self._echo(f"[{time.monotonic() - self.started:7.1f}s] {message}")

    # -- top level -------------------------------------------------------------
    def execute(self) -> RunOutcome:
        sc = self.scenario
        outcome = RunOutcome(
            self.spec,
            self.paths,
            sc.guarantee,
            self.schedule.describe(),
            [{"id": r.id, "description": r.describe()} for r in self.schedule.plan.rules],
        )
        self.paths.create()
        self.spec.save(self.paths.spec)
        self.schedule.plan.save(self.paths.faults / "plan.json")
        init_tap(self.paths.tap, sc.partitions)
        self.history = History(self.paths.history)
        self.conductor = Conductor(
            self.paths,
            self.pool,
            self.history,
            self.echo,
            self.spec.command_timeout_s,
            limit=lambda: len(self.schedule.plan.rules) + 2,
            on_crash=self._after_crash,
        )
        self.echo(f"scenario {sc.name}: {sc.summary}; seed {self.spec.seed}; run dir {self.paths.root}")
        if not self.trigger.rounds:
            self.echo(f"  trigger: {self.trigger.describe()}")
        for line in self.schedule.describe():
            self.echo("  " + line)
        try:
            with contextlib.ExitStack() as stack:
                settings: dict[str, Any] = {}
                if sc.run_resource is not None:
                    try:
                        settings = stack.enter_context(sc.run_resource(self.paths.root / "resource"))
                    except ResourceUnavailable as exc:
                        raise HarnessError(
                            f"scenario {sc.name} needs a resource that is unavailable here: {exc}"
                        ) from None
                    self.paths.resources.write_text(json.dumps(settings))
                self._check_resources(settings)
                try:
                    self._play()
                    if nothing := check_ran(read_deployed(self.paths.deployed), self.paths.checkpoint):
                        raise HarnessError(nothing)
                    outcome.result = self._check()
                    outcome.state_check = self.state_check
                finally:
                    self._shutdown()
            missing = never_fired(self.schedule.plan, read_ledger(self.paths.faults))
            outcome.unfired = missing
            if missing:
                outcome.error = "planned fault(s) never fired, so the run proves nothing about them:\n" + "\n".join(
                    f"fault {r.id} planned ({r.describe()}) never fired{r.why_unfired()}" for r in missing
                )
        except RunRefused:
            raise  # bad input: no run to report
        except HarnessError as exc:
            outcome.query_failed = isinstance(exc, QueryFailedError)
            deployed = read_deployed(self.paths.deployed)
            if outcome.query_failed and deployed is not None:
                marks = [i for i, k in enumerate(self.conductor.kills_fired) if k["point"] == DEPLOY_POINT]
                after = len(self.conductor.kills_fired) - 1 - marks[-1] if marks else 0
                outcome.refused = refusal(str(exc), deployed, self.paths.checkpoint, after)
            # A loud failure after damage may be the right answer to it; after a benign nemesis it is not.
            damaged = any(not n.benign for n in self.nemeses)
            if outcome.refused is not None:
                self._record("info", "runner", "upgrade_refused", outcome.refused.to_json())
                self.echo(f"UPGRADE REFUSED: {outcome.refused.describe()}")
            elif outcome.query_failed and not damaged and (failure := self._pipeline_failure(str(exc))):
                outcome.failure = failure  # the pipeline's own code raised: its failure, not "no verdict"
                self._record("info", "runner", "pipeline_failed", failure.to_json())
                self.echo(f"PIPELINE FAILED: {failure.describe()}")
            else:
                outcome.error = loss_first(str(exc), self.nemeses) if outcome.query_failed else str(exc)
                # After a crash, with the same pipeline on the same Spark: Spark's own failure to recover.
                if outcome.query_failed and not damaged and deployed is None and not self.spec.old_pyspark:
                    outcome.recovery = recovery_failure(str(exc), self.paths.checkpoint, self.conductor.kills_fired)
                if outcome.recovery is not None:
                    self._record("info", "runner", "recovery_failed", outcome.recovery.to_json())
                    self.echo(f"RECOVERY FAILED: {outcome.recovery.describe()}")
        finally:
            self._shutdown()
            self.history.close()
        outcome.kills_fired = self.conductor.kills_fired
        sink_dir = self.paths.output if (self.paths.output / "_spark_metadata").is_dir() else None
        for kill in outcome.kills_fired:  # which of Spark's maintenance boundaries each fault hit
            if kill.get("point") == PURGE_POINT:
                kill["boundaries"] = [STATE_PURGE]
            elif isinstance(kill.get("batch"), int):
                found = batch_boundaries(self.paths.checkpoint, sink_dir, kill["batch"])
                if kill.get("point") == SNAPSHOT_POINT and STATE_SNAPSHOT not in found:
                    found.append(STATE_SNAPSHOT)  # it fired as the copy appeared, whatever is left on disk now
                kill["boundaries"] = found
        dstream = dstream_batches_json(self.paths.oracle) if self.paths.oracle.is_dir() else None
        outcome.batches = batches_json(self.paths.checkpoint) if dstream is None else dstream
        if outcome.verdict != "exactly-once":
            sink_dir = self.paths.output if (self.paths.output / "_spark_metadata").is_dir() else None
            outcome.inspector_summary = summarize(self.paths.checkpoint, sink_dir)
        outcome.duration_s = time.monotonic() - self.started
        return outcome

    def _play(self) -> None:
        """Play the schedule's ops in order, each with its kind's handler."""
        assert self.conductor is not None
        handlers: dict[OpKind, Callable[[Op], None]] = {
            OpKind.ADD_DATA: self._add_data,
            OpKind.NEMESIS: lambda op: self._nemesis(op.name),
            OpKind.DEPLOY: lambda op: self._deploy(f"graceful stop after round {self._round}"),
            OpKind.HEAL: self._heal,
            OpKind.RUN: self._run,
            OpKind.CHECK: self._check_op,
        }
        for op in self.schedule.ops:
            handlers[op.kind](op)

    def _add_data(self, op: Op) -> None:
        self._round += 1
        r, rounds = self._round, self.spec.effective_rounds
        tap = advance(self.paths.tap, op.rows)
        try:
            fed = self.scenario.source.feed(self.paths.input, op.rows, self.scenario.rows_per_offset)
        except (OSError, ValueError) as exc:  # a context factory's error: bad input, in one line
            where = self.scenario.source.describe()
            raise HarnessError(f"round {r}: adding data through {where}: {exc}") from exc
        self._record("ok", "runner", "add_data", {"rows": op.rows, "tap": tap, **fed})
        self.echo(f"round {r}/{rounds}: {op.describe()}")

    def _heal(self, op: Op) -> None:
        self._healed = True
        self._record("info", "runner", "heal", {})

    def _run(self, op: Op) -> None:
        assert self.conductor is not None
        r, healed = self._round, self._healed
        if self.spec.old_pyspark is not None and r <= self.spec.old_rounds:
            self._old_spark_round(r)
            return
        if (
            healed
            # a source nemesis acts before a run
            and not any(n in checkpoint_nemeses() for n in self.spec.nemesis)
            and not never_fired(self.schedule.plan, read_ledger(self.paths.faults))
            and not self.scheduled  # a once job that re-ran a killed batch left newer data unread
        ):
            # Every fault has fired and the last run caught up: the final run would be empty.
            self._record("info", "runner", "run", {"skipped": "nothing pending after heal"})
            return
        if self.trigger.epochs:  # the epoch this run must commit (harness.engine.epochs)
            aims = [(f.batch, f.after_ms or 0) for f in self.schedule.plan.rules if f.batch is not None]
            target = round_target(r, self.spec.effective_rounds, aims, self.trigger.interval_ms, final=healed)
            write_target(self.paths.root, target)
        if self.scheduled:
            self.jobs += 1
            run_job(self.conductor, self.echo, self.jobs, final=healed)
            return
        msg = self._drive("run")
        self.echo(f"caught up ({len(msg.get('batches', []))} batch(es) in this query)")

    def _check_op(self, op: Op) -> None:
        msg = self._drive("check")
        self.echo(f"oracle: {msg['expected_rows']} rows expected, {msg['observed_rows']} rows visible")

    def _nemesis(self, name: str) -> None:
        """Apply a nemesis between runs (no query is running; the driver's next query re-reads it all)."""
        assert self.conductor is not None
        batch = latest_batch_id(self.paths.checkpoint)  # before the damage: a reset leaves no batch
        try:
            applied = apply_between_runs(name, self.paths, self.spec, self.scenario)
        except NemesisError as exc:
            raise HarnessError(inapplicable(name, exc)) from None
        except NemesisFailed as exc:
            raise HarnessError(f"nemesis {name} failed: {exc}") from None
        self.nemeses.append(applied)
        damage = applied.damage.to_json() if applied.damage is not None else None
        value = {"name": name, "damage": applied.description, "batch": batch, **({"source": damage} if damage else {})}
        idx = self._record("info", "runner", "nemesis", value)
        self.conductor.kills_fired.append(
            {
                "history_index": idx,
                "id": name,
                "point": applied.target,
                "action": "nemesis",
                "batch": batch if batch is not None else 0,
                "description": f"nemesis {name}: {applied.description}",
                "context": {"damage": damage} if damage else {},
            }
        )
        self.echo(f"NEMESIS {name}: {applied.description}")

    def _deploy(self, moment: str) -> None:
        """Make the upgrade's next version the one every later query runs (no query is running now)."""
        assert self.conductor is not None and self.spec.upgrade_to is not None
        deployed = Deployed(self.spec.upgrade_to, self.spec.scenario, first_v2_batch(self.paths.checkpoint), moment)
        snapshot_logs(self.paths.checkpoint, self.paths.deploy_logs, deployed.first_batch)
        deployed.save(self.paths.deployed)
        idx = self._record("info", "runner", "deploy", {"description": deployed.describe(), **asdict(deployed)})
        self.conductor.kills_fired.append(
            {
                "history_index": idx,
                "id": DEPLOY_POINT,
                "point": DEPLOY_POINT,
                "action": DEPLOY_POINT,
                "batch": deployed.first_batch,
                "description": deployed.describe(),
                "context": {},
            }
        )
        self.echo(f"DEPLOY {deployed.describe()}")

    def _old_spark_round(self, r: int) -> None:
        """Round ``r`` of a Spark upgrade run: the older PySpark runs the query; after its last round the upgrade
        is marked like a deploy, so an anomaly after it names it."""
        assert self.conductor is not None and self.spec.old_pyspark is not None
        try:
            done = run_round(self.paths, self.spec.old_pyspark, r)
        except OldSparkError as exc:
            raise HarnessError(str(exc)) from None
        self._record("ok", "runner", "old_spark_run", done)
        self.echo(f"PySpark {done['pyspark']} ran batch(es) {done['batches']} ({done['seconds']} s)")
        if r == self.spec.old_rounds:
            batch = first_v2_batch(self.paths.checkpoint)
            description = f"Spark upgrade: PySpark {done['pyspark']} stopped after round {r}; this PySpark resumes"
            idx = self._record("info", "runner", "spark_upgrade", {"description": description, "batch": batch})
            self.conductor.kills_fired.append(
                {
                    "history_index": idx,
                    "id": SPARK_UPGRADE,
                    "point": SPARK_UPGRADE,
                    "action": SPARK_UPGRADE,
                    "batch": batch,
                    "description": f"{description} at batch {batch}",
                    "context": {"from": done["pyspark"]},
                }
            )
            self.echo(f"SPARK UPGRADE: {description} at batch {batch}")

    def _after_crash(self) -> None:
        """Deploy after the driver that the spec's ``after-fault:ID`` rule killed died (before the next starts).
        Once the plan's last driver kill has fired, a standby the run keeps only for kills is not started again."""
        conductor = self.conductor
        if self.standby_for_kills and conductor and not self.schedule.driver_kills_left(
            [k.get("id") for k in conductor.kills_fired]
        ):
            self.pool.keep_standby(False)
        deploy = self.spec.deploy or ""
        if not deploy.startswith("after-fault:") or self.paths.deployed.exists():
            return
        wanted = deploy.partition(":")[2]
        fired = [k for k in read_ledger(self.paths.faults) if k.get("rule", {}).get("id") == wanted]
        if fired:
            self._deploy(f"after fault {wanted} killed the driver at batch {fired[-1].get('batch')}")

    def _check_resources(self, settings: dict[str, Any]) -> None:
        """Refuse, before any driver runs, a fault that takes down a server the run does not have."""
        for rule in self.schedule.plan.rules:
            key = action(rule.action).resource
            if key is not None and not settings.get(key):
                raise HarnessError(
                    f"fault {rule.id} ({rule.describe()}): action {rule.action} needs a server the harness started "
                    f"and supervises (the run's setting {key!r}): a Kafka scenario whose broker the harness runs, "
                    "not one given with --kafka"
                )

    # -- driver management -----------------------------------------------------
    def _record(self, type: str, process: str, f: str, value: dict[str, Any], time_ns: int | None = None) -> int:
        assert self.conductor is not None
        return self.conductor.record(type, process, f, value, time_ns)

    def _drive(self, cmd: str) -> dict[str, Any]:
        assert self.conductor is not None
        return self.conductor.drive(cmd)

    def _shutdown(self) -> None:
        """Close the pool if this runner owns it (a shared pool stays for the next run)."""
        if self._own_pool:
            self.pool.close()

    # -- verdict -----------------------------------------------------------------
    def _pipeline_failure(self, error: str) -> PipelineFailure | None:
        roots = ref_roots(self.spec.scenario, self.spec.upgrade_to or "")
        return pipeline_failure(error, self.paths.checkpoint, roots)

    def _check(self) -> CheckResult:
        assert self.conductor is not None
        fired = self.conductor.kills_fired
        result = check_run_dir(self.paths.oracle, self.paths.checkpoint, fired, self.scenario.identity)
        result = allow_losses(result, allowed_losses(self.nemeses))
        result = allow_replays(result, allowed_replays(self.nemeses))
        deployed = read_deployed(self.paths.deployed)
        if deployed is not None:
            result = mark_deploy(
                result, self.paths.oracle, deployed.first_batch, deployed.scenario, self.scenario.identity
            )
        refs = [FaultRef(f["history_index"], f["batch"], f["point"], f["description"]) for f in fired]
        committed = batch_ids(self.paths.checkpoint / "commits")
        self.state_check = check_final_state(self.paths.oracle, committed[-1] if committed else None, refs)
        if self.state_check is not None and result.valid != "unknown":
            if self.state_check.error:  # a reader or comparison failure is no verdict, never a pass
                result.valid, result.error = "unknown", self.state_check.describe()
            elif self.state_check.anomalies:
                result.anomalies += self.state_check.anomalies
                result.valid = False
        self._record("ok", "runner", "check", {"verdict": result.verdict, "counts": result.counts()})
        return result


def run_spec(
    spec: RunSpec,
    run_dir: Path | None = None,
    echo: Callable[[str], None] | None = None,
    standby: bool | Standby | None = None,
    pool: DriverPool | None = None,
    finished: Callable[[RunOutcome], None] | None = None,
) -> RunOutcome:
    """Run ``spec`` in ``run_dir`` (kept) or a temp dir (removed on a pass, kept otherwise);
    ``finished(outcome)`` runs while the run directory still exists (e.g. to draw its timeline);
    ``standby`` keeps a second driver ready to take over after a hard kill (``None``: :func:`default_standby`).
    ``pool`` lends a running driver (left open; its master and confs must be the spec's); without it the run
    starts its own."""
    if echo is None:
        echo = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    if run_dir is not None:
        run_dir = Path(run_dir).resolve()
        if run_dir.exists() and any(run_dir.iterdir()):
            raise HarnessError(f"run directory {run_dir} is not empty; give a new --run-dir or remove it")
    root = run_dir or Path(tempfile.mkdtemp(prefix=f"harness-{safe_name(spec.scenario)}-"))
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        paths = RunPaths(root)
        if pool is not None:
            outcome = Runner(spec, paths, echo, pool=pool).execute()
        else:
            with DriverPool(paths.logs, spec.master, spec.confs) as own:
                runner = Runner(spec, paths, echo, pool=own)
                own.keep_standby(default_standby(runner.schedule) if standby is None else standby)
                runner.standby_for_kills = standby is None
                outcome = runner.execute()
    finally:
        signal.signal(signal.SIGTERM, previous)
    if finished is not None:
        finished(outcome)
    if run_dir is None and outcome.verdict == "exactly-once":
        shutil.rmtree(root, ignore_errors=True)
        outcome.kept_run_dir = False
    return outcome


def default_standby(schedule: Schedule) -> Standby | bool:
    """The standby of a run of its own: :func:`~harness.engine.pool.standby_for_kills` of the plan's driver
    kills."""
    return standby_for_kills(schedule.driver_kills)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
