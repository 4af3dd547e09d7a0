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
from pathlib import Path
from typing import Any

from fault_injectors.crash import never_fired, read_ledger
from fault_injectors.nemesis import NemesisError, apply_nemesis
from fault_injectors.observe import OBSERVATIONS_FILE
from fault_injectors.plan import FaultRule
from harness.checker import CheckResult
from harness.driverproc import DriverProcess
from harness.history import History, read_jsonl_from
from harness.inspector import latest_batch_id, summarize
from harness.outcome import RunOutcome
from harness.pool import DriverPool, DriverStartError
from harness.rundir import RunPaths
from harness.schedule import Schedule, build_schedule
from harness.spec import RunSpec
from harness.verdict import batches_json, check_run_dir
from scenarios import get_scenario
from scenarios.base import ResourceUnavailable
from scenarios.tap import advance, init_tap


class HarnessError(RuntimeError):
    """The harness could not produce a verdict (infrastructure, not the pipeline)."""


class QueryFailedError(HarnessError):
    """The streaming query refused to continue (a loud failure, e.g. after checkpoint damage)."""


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
        self._own_pool = pool is None
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
        self._event_offsets: dict[int, int] = {}
        self._ledger_seen = 0
        self._obs_offset = 0
        self.kills_fired: list[dict[str, Any]] = []
        self.history: History | None = None

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
        self.echo(f"scenario {sc.name}: {sc.summary}; seed {self.spec.seed}; run dir {self.paths.root}")
        for line in self.schedule.describe():
            self.echo("  " + line)
        try:
            with contextlib.ExitStack() as stack:
                if sc.resource is not None:
                    try:
                        settings = stack.enter_context(sc.resource(self.paths.root / "resource"))
                    except ResourceUnavailable as exc:
                        raise HarnessError(
                            f"scenario {sc.name} needs a resource that is unavailable here: {exc}"
                        ) from None
                    self.paths.resources.write_text(json.dumps(settings))
                try:
                    self._play()
                    outcome.result = self._check()
                finally:
                    self._shutdown()
            missing = never_fired(self.schedule.plan, read_ledger(self.paths.faults))
            outcome.unfired = missing
            if missing:
                outcome.error = "planned fault(s) never fired, so the run proves nothing about them:\n" + "\n".join(
                    f"fault {r.id} planned ({r.describe()}) never fired{r.why_unfired()}" for r in missing
                )
        except HarnessError as exc:
            outcome.error = str(exc)
            outcome.query_failed = isinstance(exc, QueryFailedError)
        finally:
            self._shutdown()
            self.history.close()
        outcome.kills_fired = self.kills_fired
        outcome.batches = batches_json(self.paths.checkpoint)
        if outcome.verdict != "exactly-once":
            sink_dir = self.paths.output if (self.paths.output / "_spark_metadata").is_dir() else None
            outcome.inspector_summary = summarize(self.paths.checkpoint, sink_dir)
        outcome.duration_s = time.monotonic() - self.started
        return outcome

    def _play(self) -> None:
        rounds = self.spec.effective_rounds
        r = 0
        healed = False
        for op in self.schedule.ops:
            if op.kind == "add_data":
                r += 1
                tap = advance(self.paths.tap, op.rows)
                self._record("ok", "runner", "add_data", {"rows": op.rows, "tap": tap})
                self.echo(f"round {r}/{rounds}: {op.describe()}")
            elif op.kind == "nemesis":
                try:  # between runs no query is running; the driver's next query re-reads the checkpoint
                    what = apply_nemesis(op.name, self.paths.checkpoint)
                except (NemesisError, OSError) as exc:
                    raise HarnessError(f"nemesis {op.name} could not be applied: {exc}") from None
                batch = latest_batch_id(self.paths.checkpoint)
                idx = self._record("info", "runner", "nemesis", {"name": op.name, "damage": what, "batch": batch})
                desc = f"nemesis {op.name}: {what}"
                self.kills_fired.append(
                    {
                        "history_index": idx,
                        "id": op.name,
                        "point": "checkpoint",
                        "action": "nemesis",
                        "batch": batch if batch is not None else 0,
                        "description": desc,
                        "context": {},
                    }
                )
                self.echo(f"NEMESIS {op.name}: {what}")
            elif op.kind == "heal":
                healed = True
                self._record("info", "runner", "heal", {})
            elif op.kind == "run":
                if (
                    healed
                    and not self.spec.nemesis
                    and not never_fired(self.schedule.plan, read_ledger(self.paths.faults))
                ):
                    # Every fault has fired and the last run caught up: the final run would be empty.
                    self._record("info", "runner", "run", {"skipped": "nothing pending after heal"})
                    continue
                msg = self._drive("run")
                self.echo(f"caught up ({len(msg.get('batches', []))} batch(es) in this query)")
            elif op.kind == "check":
                msg = self._drive("check")
                self.echo(f"oracle: {msg['expected_rows']} rows expected, {msg['observed_rows']} rows visible")

    # -- driver management -----------------------------------------------------
    def _record(self, type: str, process: str, f: str, value: dict[str, Any], time_ns: int | None = None) -> int:
        assert self.history is not None
        return self.history.append(type, process, f, value, time_ns).index

    def _ensure_driver(self) -> DriverProcess:
        """The pool's driver with this run open (starting a driver if none is alive)."""
        try:
            drv, startup_s = self.pool.start()
        except DriverStartError as exc:
            self._record("fail", "runner", "start_driver", {"reason": str(exc).splitlines()[0]})
            raise HarnessError(str(exc)) from None
        if startup_s:
            self._record("ok", "runner", "start_driver", {"driver": drv.name, "pid": drv.pid, "startup_s": startup_s})
            self.echo(f"{drv.name} ready (pid {drv.pid}, {startup_s:.1f} s to start Spark)")
        try:
            msg = self.pool.open(self.paths.root, self.spec.command_timeout_s)
        except TimeoutError:
            msg = {"event": "error", "message": "no answer to 'open'"}
        if msg is None or msg.get("event") != "opened":
            self.pool.discard()
            reason = (msg or {}).get("message", "the driver died")
            raise HarnessError(f"{drv.name} could not open run {self.paths.root}: {reason}\n  log: {drv.log_path}")
        return drv

    def _drive(self, cmd: str) -> dict[str, Any]:
        """Send ``cmd`` until a driver completes it, replacing killed drivers."""
        limit = len(self.schedule.plan.rules) + 2
        for _attempt in range(limit + 1):
            drv = self._ensure_driver()
            self._record("invoke", drv.name, cmd, {})
            msg: dict[str, Any] | None = None
            if drv.send({"cmd": cmd}):
                try:
                    msg = drv.receive(self.spec.command_timeout_s)
                except TimeoutError:
                    self._merge(drv)
                    self._record("info", drv.name, "hung", {"cmd": cmd, "timeout_s": self.spec.command_timeout_s})
                    self.pool.discard()
                    raise HarnessError(
                        f"watchdog: {drv.name} did not finish '{cmd}' within {self.spec.command_timeout_s:.0f} s "
                        f"and was killed\n  log: {drv.log_path}\n{drv.log_tail()}"
                    ) from None
            new_faults = self._merge(drv)
            if msg is None:
                self._on_death(drv, cmd, new_faults)
                continue
            if msg.get("event") == "error" and new_faults:
                # An injected exception / worker exit failed the query; the driver
                # survives, so restart the query in it (a soft fault).
                self._record("fail", drv.name, cmd, {"message": msg.get("message"), "soft_fault": True})
                self.echo(f"query failed after injected fault(s); restarting the query in {drv.name}")
                continue
            if msg.get("event") == "error":
                self._record("fail", drv.name, cmd, {"message": msg.get("message")})
                if msg.get("query_failed"):
                    raise QueryFailedError(
                        f"the streaming query failed loudly in {drv.name}: {msg.get('message')}\n  log: {drv.log_path}"
                    )
                raise HarnessError(
                    f"'{cmd}' failed in {drv.name}: {msg.get('message')}\n  log: {drv.log_path}\n"
                    + str(msg.get("traceback", ""))[-2000:]
                )
            self._record("ok", drv.name, cmd, {k: v for k, v in msg.items() if k != "event"})
            return msg
        raise HarnessError(
            f"'{cmd}' did not complete after {limit} restarts of the driver or the query; "
            "a fault that fires on every attempt (times=null) keeps the query from making progress"
        )

    def _on_death(self, drv: DriverProcess, cmd: str, new_faults: list[dict[str, Any]]) -> None:
        rc = drv.wait_exit(10)
        self.pool.discard()
        if not new_faults:
            self._record("fail", drv.name, "crash", {"returncode": rc, "cmd": cmd})
            raise HarnessError(
                f"{drv.name} died during '{cmd}' (exit code {rc}) with no planned fault firing\n"
                f"  log: {drv.log_path}\n{drv.log_tail()}"
            )
        batch = new_faults[-1].get("batch")
        self._record("info", drv.name, "crash", {"returncode": rc, "batch": batch, "batch_outcome": "unknown"})
        self.echo(f"{drv.name} killed (exit {rc}); restarting from the checkpoint")

    def _merge(self, drv: DriverProcess) -> list[dict[str, Any]]:
        """Move new driver events and fault-ledger records into the history, in time order."""
        events, self._event_offsets[drv.incarnation] = read_jsonl_from(
            self.paths.driver_events(drv.incarnation), self._event_offsets.get(drv.incarnation, 0)
        )
        observations, self._obs_offset = read_jsonl_from(self.paths.faults / OBSERVATIONS_FILE, self._obs_offset)
        ledger = read_ledger(self.paths.faults)
        new_faults = ledger[self._ledger_seen :]
        self._ledger_seen = len(ledger)
        items = [(e["time_ns"], "event", e) for e in [*events, *observations]]
        items += [(k["time_ns"], "fault", k) for k in new_faults]
        for t, what, item in sorted(items, key=lambda x: x[0]):
            if what == "fault":
                rule = FaultRule.from_dict(item["rule"])
                batch = item.get("batch", rule.batch)
                desc = f"{rule.id}: {rule.describe().replace('batch any', f'batch {batch}')}"
                if item["context"].get("description"):  # a sink.step fault: the step it came after
                    desc += f": {item['context']['description']}"
                f = "kill" if rule.action in ("kill_process_group", "kill_executor") else "fault"
                idx = self._record("info", drv.name, f, {**item, "description": desc}, t)
                fired = {"history_index": idx, "id": rule.id, "point": rule.point, "action": rule.action}
                self.kills_fired.append({**fired, "batch": batch, "description": desc, "context": item["context"]})
                self.echo(f"FAULT fired {desc}")
            else:
                self._record("ok", drv.name, item["f"], item["value"], t)
                if item["f"] == "batch" and item["value"].get("rows"):
                    v = item["value"]
                    self.echo(
                        f"{drv.name} batch {v['batch_id']} committed: {v['rows']} rows {v['start']} -> {v['end']}"
                    )
        return new_faults

    def _shutdown(self) -> None:
        """Close the pool if this runner owns it (a shared pool stays for the next run)."""
        if self._own_pool:
            self.pool.close()

    # -- verdict -----------------------------------------------------------------
    def _check(self) -> CheckResult:
        result = check_run_dir(self.paths.oracle, self.paths.checkpoint, self.kills_fired, self.scenario.identity)
        self._record("ok", "runner", "check", {"verdict": result.verdict, "counts": result.counts()})
        return result


def run_spec(
    spec: RunSpec,
    run_dir: Path | None = None,
    echo: Callable[[str], None] | None = None,
    standby: bool = False,
    pool: DriverPool | None = None,
) -> RunOutcome:
    """Run ``spec`` in ``run_dir`` (kept) or a temp dir (removed on a pass, kept otherwise);
    ``standby`` keeps a warm second driver ready to take over after a hard kill. ``pool`` lends a running
    driver (left open; its master and confs must be the spec's); without it the run starts its own."""
    if echo is None:
        echo = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    if run_dir is not None:
        run_dir = Path(run_dir).resolve()
        if run_dir.exists() and any(run_dir.iterdir()):
            raise HarnessError(f"run directory {run_dir} is not empty; give a new --run-dir or remove it")
    root = run_dir or Path(tempfile.mkdtemp(prefix=f"harness-{spec.scenario}-"))
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        paths = RunPaths(root)
        if pool is not None:
            outcome = Runner(spec, paths, echo, pool=pool).execute()
        else:
            with DriverPool(paths.logs, spec.master, spec.confs, standby=standby) as own:
                outcome = Runner(spec, paths, echo, pool=own).execute()
    finally:
        signal.signal(signal.SIGTERM, previous)
    if run_dir is None and outcome.verdict == "exactly-once":
        shutil.rmtree(root, ignore_errors=True)
        outcome.kept_run_dir = False
    return outcome


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
