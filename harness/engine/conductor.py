"""The conductor: sends one run's commands to the pool's child driver until they complete.

Every run, whatever it feeds and checks (a scenario's runner, a source's
end-to-end run), talks to its driver through this one loop: a driver SIGKILLed
by a planned fault is replaced by a fresh one that restarts the query from the
run's checkpoint and gets the interrupted command again; a query failed by an
injected exception is restarted in the same driver; a driver silent past the
command timeout is killed by the watchdog. Driver events (completed batches)
and fault-ledger records are moved into the run's history in time order, and
every fired fault is listed in :attr:`Conductor.kills_fired`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fault_injectors.crash import read_ledger
from fault_injectors.observe import OBSERVATIONS_FILE
from fault_injectors.plan import FaultRule
from fault_injectors.registry import history_kind
from harness.engine.driverproc import DriverProcess
from harness.engine.history import History, read_jsonl_from
from harness.engine.pool import DriverPool, DriverStartError
from harness.engine.rundir import RunPaths
from harness.errors import HarnessFailure, Observed, UsageError


class HarnessError(HarnessFailure, RuntimeError):
    """The harness could not produce a verdict (infrastructure, not the pipeline)."""


class RunRefused(UsageError, HarnessError):
    """The driver refused the run's pipeline as bad input (e.g. a DStream setup function without a checkpoint):
    the message is one line saying what to change."""


class QueryFailedError(Observed, HarnessError):
    """The streaming query refused to continue (a loud failure, e.g. after checkpoint damage)."""


class Conductor:
    """Drives the run in ``paths`` on ``pool``'s driver, writing ``history``.

    ``limit()`` is how many driver or query restarts a command may take (the planned faults + 2);
    ``on_crash`` is called after a driver died by a planned fault, before the next one starts
    (a source run feeds the data that arrives while the driver is down)."""

    def __init__(
        self,
        paths: RunPaths,
        pool: DriverPool,
        history: History,
        echo: Callable[[str], None],
        timeout_s: float,
        limit: Callable[[], int],
        on_crash: Callable[[], None] | None = None,
    ) -> None:
        self.paths, self.pool, self.history, self.echo = paths, pool, history, echo
        self.timeout_s, self.limit, self.on_crash = timeout_s, limit, on_crash
        self.kills_fired: list[dict[str, Any]] = []
        self.driver_starts = 0
        self._event_offsets: dict[int, int] = {}
        self._ledger_seen = 0
        self._obs_offset = 0

    def record(self, type: str, process: str, f: str, value: dict[str, Any], time_ns: int | None = None) -> int:
        """Append one history event; its index."""
        return self.history.append(type, process, f, value, time_ns).index

    def ensure_driver(self) -> DriverProcess:
        """The pool's driver with this run open (starting a driver if none is alive)."""
        try:
            drv, startup_s = self.pool.start()
        except DriverStartError as exc:
            self.record("fail", "runner", "start_driver", {"reason": str(exc).splitlines()[0]})
            raise HarnessError(str(exc)) from None
        if startup_s:
            self.driver_starts += 1
            self.record("ok", "runner", "start_driver", {"driver": drv.name, "pid": drv.pid, "startup_s": startup_s})
            self.echo(f"{drv.name} ready (pid {drv.pid}, {startup_s:.1f} s to start Spark)")
        try:
            msg = self.pool.open(self.paths.root, self.timeout_s)
        except TimeoutError:
            msg = {"event": "error", "message": "no answer to 'open'"}
        if msg is None or msg.get("event") != "opened":
            self.pool.discard()
            reason = (msg or {}).get("message", "the driver died")
            raise HarnessError(f"{drv.name} could not open run {self.paths.root}: {reason}\n  log: {drv.log_path}")
        return drv

    def drive(self, cmd: str, retry: bool = True) -> dict[str, Any]:
        """Send ``cmd`` until a driver completes it, replacing killed drivers; its answer.
        ``HarnessError`` (``QueryFailedError`` for a query that failed loudly) when it cannot complete.
        ``retry=False`` (a scheduled job run): a planned fault ends the attempt instead, answered as
        ``{"event": "killed"}`` (the driver died) or ``{"event": "job_failed"}`` (an injected fault failed
        the query)."""
        limit = self.limit()
        for _attempt in range(limit + 1):
            drv = self.ensure_driver()
            self.record("invoke", drv.name, cmd, {})
            msg: dict[str, Any] | None = None
            if drv.send({"cmd": cmd}):
                try:
                    msg = drv.receive(self.timeout_s)
                except TimeoutError:
                    self.merge(drv)
                    self.record("info", drv.name, "hung", {"cmd": cmd, "timeout_s": self.timeout_s})
                    self.pool.discard()
                    raise HarnessError(
                        f"watchdog: {drv.name} did not finish '{cmd}' within {self.timeout_s:.0f} s "
                        f"and was killed\n  log: {drv.log_path}\n{drv.log_tail()}"
                    ) from None
            new_faults = self.merge(drv)
            if msg is None:
                self._on_death(drv, cmd, new_faults)
                if not retry:
                    return {"event": "killed", "faults": [f["rule"]["id"] for f in new_faults]}
                continue
            if msg.get("event") == "error" and new_faults:
                # An injected exception / worker exit failed the query; the driver
                # survives, so restart the query in it (a soft fault).
                self.record("fail", drv.name, cmd, {"message": msg.get("message"), "soft_fault": True})
                if not retry:
                    return {"event": "job_failed", "faults": [f["rule"]["id"] for f in new_faults]}
                self.echo(f"query failed after injected fault(s); restarting the query in {drv.name}")
                continue
            if msg.get("event") == "error":
                self.record("fail", drv.name, cmd, {"message": msg.get("message")})
                if msg.get("refused"):
                    raise RunRefused(str(msg.get("message")))
                if msg.get("query_failed"):
                    raise QueryFailedError(
                        f"the streaming query failed loudly in {drv.name}: {msg.get('message')}\n  log: {drv.log_path}"
                    )
                raise HarnessError(
                    f"'{cmd}' failed in {drv.name}: {msg.get('message')}\n  log: {drv.log_path}\n"
                    + str(msg.get("traceback", ""))[-2000:]
                )
            self.record("ok", drv.name, cmd, {k: v for k, v in msg.items() if k != "event"})
            return msg
        raise HarnessError(
            f"'{cmd}' did not complete after {limit} restarts of the driver or the query; "
            "a fault that fires on every attempt (times=null) keeps the query from making progress"
        )

    def _on_death(self, drv: DriverProcess, cmd: str, new_faults: list[dict[str, Any]]) -> None:
        rc = drv.wait_exit(10)
        self.pool.discard()
        if not new_faults:
            self.record("fail", drv.name, "crash", {"returncode": rc, "cmd": cmd})
            raise HarnessError(
                f"{drv.name} died during '{cmd}' (exit code {rc}) with no planned fault firing\n"
                f"  log: {drv.log_path}\n{drv.log_tail()}"
            )
        batch = new_faults[-1].get("batch")
        self.record("info", drv.name, "crash", {"returncode": rc, "batch": batch, "batch_outcome": "unknown"})
        self.echo(f"{drv.name} killed (exit {rc}); restarting from the checkpoint")
        if self.on_crash is not None:
            self.on_crash()

    def merge(self, drv: DriverProcess) -> list[dict[str, Any]]:
        """Move new driver events and fault-ledger records into the history, in time order; the new records."""
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
                self._record_fault(drv, item, t)
            else:
                self.record("ok", drv.name, item["f"], item["value"], t)
                if item["f"] == "batch" and item["value"].get("rows"):
                    v = item["value"]
                    self.echo(
                        f"{drv.name} batch {v['batch_id']} committed: {v['rows']} rows {v['start']} -> {v['end']}"
                    )
        return new_faults

    def _record_fault(self, drv: DriverProcess, item: dict[str, Any], t: int) -> None:
        rule = FaultRule.from_dict(item["rule"])
        batch = item.get("batch", rule.batch)
        desc = f"{rule.id}: {rule.describe().replace('batch any', f'batch {batch}')}"
        if item["context"].get("description"):  # a sink.step fault: the step it came after
            desc += f": {item['context']['description']}"
        f = history_kind(rule.action)
        idx = self.record("info", drv.name, f, {**item, "description": desc}, t)
        fired = {"history_index": idx, "id": rule.id, "point": rule.point, "action": rule.action}
        self.kills_fired.append({**fired, "batch": batch, "description": desc, "context": item["context"]})
        self.echo(f"FAULT fired {desc}")
