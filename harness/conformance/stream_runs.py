"""End-to-end source runs under real SIGKILLs, with :mod:`.stream_child` as the driver.

:func:`run_stream` plays ``rounds`` rounds of *feed data, run until caught up*
against one run directory. Before round ``r`` (``r < len(kill_points)``) a kill
rule is added to the fault plan at ``kill_points[r]`` of the batch that round
will plan (the newest logged batch id + 1), so each kill fires in its own
batch. A driver killed by a planned fault is replaced by a new one (a new JVM)
that restarts the query from the checkpoint and gets the interrupted command
again; before it starts, one more round of data is fed (data keeps arriving
while a driver is down, so a replayed batch is read with newer data present).
Then a final run, the oracle, and the multiset checker. Every start, command,
kill and crash is a history event (``history.jsonl``, the same event names the
runner uses), which the timeline renderer reads.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fault_injectors.crash import never_fired, read_ledger
from fault_injectors.plan import FaultPlan, FaultRule
from harness.checker import BatchSpan, CheckResult, check_exactly_once
from harness.conformance.stream_driver import STARTUP_TIMEOUT_S, ChildDriver
from harness.history import History
from harness.inspector import CheckpointError, latest_batch_id, read_batches
from harness.procs import kill_token, new_token
from harness.rundir import RunPaths

Feeder = Callable[[int], dict[str, Any]]


@dataclass
class StreamOutcome:
    """What one end-to-end run showed. ``verdict``: ``exactly-once`` | ``violated`` | ``unknown``."""

    run_dir: Path
    result: CheckResult | None = None
    error: str | None = None
    kills_fired: list[dict[str, Any]] = field(default_factory=list)
    driver_starts: int = 0
    duration_s: float = 0.0
    #: Rounds after which data had been added but the run planned no new batch (the source reported no progress).
    stalls: list[int] = field(default_factory=list)
    #: Planned kills that never fired (an error unless the run made them optional).
    unfired: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return "unknown" if self.error or self.result is None else self.result.verdict


class StreamRun:
    def __init__(self, run_dir: Path, spec: dict[str, Any], echo: Callable[[str], None], timeout_s: float) -> None:
        self.paths = RunPaths(Path(run_dir).resolve())
        self.paths.create()
        (self.paths.root / "stream.json").write_text(json.dumps(spec, indent=2))
        (self.paths.root / "checkpoint").mkdir(exist_ok=True)
        self.spec, self.echo, self.timeout_s = spec, echo, timeout_s
        self.history = History(self.paths.history)
        self.token, self.incarnation = new_token(), 0
        self.child: ChildDriver | None = None
        #: With ``use_standby``, a second driver started (and warmed) while the active one runs, to take over
        #: after a kill. Off by default: on a busy 2-core machine the extra JVM slowed runs down (measured).
        self.standby: ChildDriver | None = None
        self.use_standby = False
        self.rules: list[FaultRule] = []
        self.ledger_seen = 0
        #: Called after a driver died, before the next one starts (data arriving while it was down).
        self.on_crash: Callable[[], None] | None = None
        self.outcome = StreamOutcome(self.paths.root)

    def arm(self, point: str, seq: int, at_least: int = 0) -> None:
        """Add a kill at ``point`` of the batch the next run will plan, or of batch ``at_least`` if later."""
        latest = latest_batch_id(self.paths.checkpoint)
        batch = max(at_least, 0 if latest is None else latest + 1)
        self.rules.append(FaultRule(f"k{seq}", point, batch))
        FaultPlan(tuple(self.rules)).save(self.paths.faults / "plan.json")
        self.echo(f"  armed k{seq}: kill at {point} of batch {batch}")

    def _await(self, child: ChildDriver, event: str) -> dict[str, Any]:
        msg = child.receive(STARTUP_TIMEOUT_S)
        if msg is None or msg.get("event") != event:
            child.kill()
            reason = (msg or {}).get("message", "it exited before answering")
            raise RuntimeError(f"{child.name} failed to start: {reason}\n  log: {child.log_path}\n{child.log_tail()}")
        return msg

    def _spawn(self) -> ChildDriver:
        self.incarnation += 1
        return ChildDriver(self.paths, self.incarnation, self.token)

    def _ensure_child(self) -> ChildDriver:
        """The active driver; after a kill the warm standby takes over (a new standby starts behind it)."""
        if self.child is not None:
            return self.child
        t0 = time.monotonic()
        child, self.standby = self.standby, None
        if child is not None:
            msg = self._await(child, "ready")
            self._await(child, "warmed")
        else:
            child = self._spawn()
            msg = self._await(child, "ready")
        waited = time.monotonic() - t0
        self.outcome.driver_starts += 1
        started = {"driver": child.name, "pid": msg["pid"], "startup_s": waited}
        self.history.append("ok", "runner", "start_driver", started)
        self.echo(f"  {child.name} ready (waited {waited:.1f} s)")
        self.child = child
        if self.use_standby:
            self.standby = self._spawn()
            self.standby.send({"cmd": "warm"})
        return child

    def _merge_faults(self, proc: str) -> list[dict[str, Any]]:
        ledger = read_ledger(self.paths.faults)
        new, self.ledger_seen = ledger[self.ledger_seen :], len(ledger)
        for rec in new:
            rule = FaultRule.from_dict(rec["rule"])
            desc = f"{rule.id}: {rule.describe()}"
            ev = self.history.append("info", proc, "kill", {**rec, "description": desc}, rec["time_ns"])
            fired = {"history_index": ev.index, "id": rule.id, "point": rule.point, "batch": rec.get("batch")}
            self.outcome.kills_fired.append({**fired, "description": desc, "context": rec.get("context", {})})
            self.echo(f"  FAULT fired {desc}")
        return new

    def drive(self, cmd: str) -> dict[str, Any]:
        """Send ``cmd`` until a driver completes it, replacing drivers killed by planned faults."""
        for _ in range(len(self.rules) + 2):
            child = self._ensure_child()
            self.history.append("invoke", child.name, cmd, {})
            msg = child.receive(self.timeout_s) if child.send({"cmd": cmd}) else None
            new = self._merge_faults(child.name)
            if msg is None:
                rc = child.wait_exit(30)
                child.kill()
                self.child = None
                if not new:
                    raise RuntimeError(
                        f"{child.name} died during '{cmd}' (exit {rc}) with no planned fault\n"
                        f"  log: {child.log_path}\n{child.log_tail()}"
                    )
                self.history.append("info", child.name, "crash", {"returncode": rc, "batch": new[-1].get("batch")})
                if self.on_crash is not None:
                    self.on_crash()
                continue
            if msg.get("event") == "error":
                self.history.append("fail", child.name, cmd, {"message": msg.get("message")})
                raise RuntimeError(f"'{cmd}' failed in {child.name}: {msg.get('message')}\n  log: {child.log_path}")
            self.history.append("ok", child.name, cmd, {k: v for k, v in msg.items() if k != "event"})
            return msg
        raise RuntimeError(f"'{cmd}' did not complete after {len(self.rules) + 2} driver starts")

    def close(self) -> None:
        children = [c for c in (self.child, self.standby) if c is not None]
        self.child = self.standby = None
        for c in children:
            c.send({"cmd": "exit"})
        for c in children:
            c.wait_exit(60)
            c.kill()
        kill_token(self.token, prefix=True)
        self.history.close()


def spans_by_value(checkpoint: Path, kind: str, options: dict[str, str]) -> list[BatchSpan]:
    """Batch spans in *row* units for sources whose rows number themselves
    (``rate``: value = second x rowsPerSecond; ``rate-micro-batch``: value = offset);
    empty for other sources or an unreadable checkpoint."""
    try:
        records = read_batches(checkpoint)
    except (CheckpointError, OSError):
        return []
    scale = int(options.get("rowsPerSecond", "1")) if kind == "rate" else 1
    spans, prev = [], 0
    for rec in records:
        end = rec.offsets.sources[0] if rec.offsets and rec.offsets.sources else None
        n = int(end.get("offset", 0)) if isinstance(end, dict) else int(end or 0)
        spans.append(BatchSpan(rec.batch_id, {0: prev * scale}, {0: n * scale}, rec.committed))
        prev = n
    return spans


def verdict(run_dir: Path, spec: dict[str, Any], faults: Sequence[dict[str, Any]]) -> CheckResult:
    """The multiset verdict of a finished run (``unknown`` when its files are unreadable).
    For ``rate`` / ``rate-micro-batch`` each anomaly is traced to its batch through its ``value``."""
    import dataclasses

    import pyarrow.parquet as pq

    from harness.checker import FaultRef

    try:
        expected = pq.read_table(run_dir / "oracle" / "expected.parquet").to_pylist()
        observed = pq.read_table(run_dir / "oracle" / "observed.parquet").to_pylist()
    except OSError as exc:
        return CheckResult("unknown", error=f"could not read the run's oracle files: {exc}")
    identity = tuple(spec.get("identity") or spec.get("compare") or (expected[0].keys() if expected else ()))
    refs = [FaultRef(f["history_index"], f["batch"], f["point"], f["description"]) for f in faults]
    result = check_exactly_once(expected, observed, faults=refs, identity=identity)
    if spec["kind"] not in ("rate", "rate-micro-batch") or not result.anomalies:
        return result
    spans = spans_by_value(run_dir / "checkpoint", spec["kind"], spec["options"])
    located = []
    for a in result.anomalies:
        value = a.row.get("value")
        span = next((b for b in spans if isinstance(value, int) and b.start[0] <= value < b.end[0]), None)
        if span is None:
            located.append(a)
            continue
        before = [f for f in refs if f.batch_id is not None and f.batch_id <= span.batch_id]
        fault = max(before, key=lambda f: (f.batch_id, f.history_index)) if before else None
        rng = {"value": [span.start[0], span.end[0]]}
        located.append(dataclasses.replace(a, batch_id=span.batch_id, offset_range=rng, fault=fault))
    result.anomalies = located
    return result


def run_stream(
    run_dir: Path,
    spec: dict[str, Any],
    feed: Feeder,
    rounds: int,
    kill_points: Sequence[str],
    echo: Callable[[str], None],
    timeout_s: float = 300.0,
    kill_batch: int = 0,
    kills_optional: bool = False,
) -> StreamOutcome:
    """Play the run (see the module docstring); never raises for a run that went wrong: ``outcome.error``.
    Each kill is planned for batch ``kill_batch`` or later (the checkpoint that many batches in). A kill that
    never fired is an error unless ``kills_optional`` (then it is listed in ``outcome.unfired``)."""
    t0 = time.monotonic()
    run = StreamRun(run_dir, spec, echo, timeout_s)
    downtime = [0]

    def while_down() -> None:  # data keeps arriving while the driver is dead
        downtime[0] += 1
        fed = feed(rounds + downtime[0] - 1)
        run.history.append("ok", "runner", "add_data", {"round": f"while down {downtime[0]}", **fed})

    run.on_crash = while_down
    try:
        for r in range(rounds):
            fed = feed(r)
            run.history.append("ok", "runner", "add_data", {"round": r + 1, **fed})
            if r < len(kill_points):
                run.arm(kill_points[r], r + 1, at_least=kill_batch)
            before = latest_batch_id(run.paths.checkpoint)
            run.drive("run")
            if latest_batch_id(run.paths.checkpoint) == before and fed.get("rows", 1):
                run.outcome.stalls.append(r + 1)
                run.history.append("info", "runner", "stalled", {"round": r + 1, "batch": before})
                echo(f"  round {r + 1}: data was added but no new batch was planned")
        run.history.append("info", "runner", "heal", {})
        run.drive("run")
        msg = run.drive("check")
        echo(f"  oracle: {msg['expected_rows']} rows expected, {msg['observed_rows']} visible")
        missing = never_fired(FaultPlan(tuple(run.rules)), read_ledger(run.paths.faults))
        run.outcome.unfired = [r.describe() for r in missing]
        if missing and not kills_optional:
            run.outcome.error = "planned fault(s) never fired: " + "; ".join(run.outcome.unfired)
        run.outcome.result = verdict(run.paths.root, spec, run.outcome.kills_fired)
        run.history.append("ok", "runner", "check", {"verdict": run.outcome.result.verdict})
    except (RuntimeError, TimeoutError, OSError) as exc:
        run.outcome.error = str(exc)
    finally:
        run.close()
    run.outcome.duration_s = time.monotonic() - t0
    return run.outcome
