"""End-to-end source runs under real SIGKILLs, on the harness's one driver pool and conductor.

:func:`run_source` plays ``rounds`` rounds of *feed data, run until caught up*
against one run directory, whose ``source_run.json`` makes the harness driver
run the source under test into the parquet file sink
(:mod:`.query`). Before round ``r`` (``r < len(kill_points)``, unless
``kill_points[r]`` is ``None``) a kill rule is added to the fault plan at ``kill_points[r]`` of the batch that round
will plan (the newest logged batch id + 1), so each kill fires in its own
batch. A driver killed by a planned fault is replaced by a new one (a new JVM,
or the pool's warm standby) that restarts the query from the checkpoint and
gets the interrupted command again (:class:`harness.engine.conductor.Conductor`, as
for every run: watchdog, run tokens, ledger, history); before it starts, one
more round of data is fed (data keeps arriving while a driver is down, so a
replayed batch is read with newer data present). Then a final run, the oracle,
and the multiset checker.

A context-less run (``batches_per_run`` in the spec, a feed that adds nothing) may
instead aim round ``r``'s kill at the ``kill_nth[r]``-th batch that round commits
(the newest committed batch id + k): its query runs until that many more batches
commit, and the batch after the newest committed one may already be logged by the
query the round before (stopped just after it planned it), so a kill at
``after_offsets_logged`` goes to the first batch the round logs itself.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fault_injectors.crash import never_fired, read_ledger
from fault_injectors.plan import FaultPlan, FaultRule
from fault_injectors.points import marking
from harness.engine.conductor import Conductor
from harness.engine.history import History
from harness.engine.pool import DriverPool, standby_for_kills
from harness.engine.rundir import RunPaths
from harness.inspector import CheckpointError, batch_ids, latest_batch_id, read_batches
from harness.spark.session import DEFAULT_MASTER
from harness.verdict.checker import BatchSpan, CheckResult

Feeder = Callable[[int], dict[str, Any]]
#: What the harness driver opens a source run's directory with (:func:`harness.engine.driver.open_run`).
HANDLER = "harness.conformance.source.query:SourceQuery"


@dataclass
class SourceOutcome:
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

    from harness.verdict.check import check_tables
    from harness.verdict.checker import FaultRef

    try:
        tables = (
            pq.read_table(run_dir / "oracle" / "expected.parquet"),
            pq.read_table(run_dir / "oracle" / "observed.parquet"),
        )
    except OSError as exc:
        return CheckResult("unknown", error=f"could not read the run's oracle files: {exc}")
    identity = tuple(spec.get("identity") or spec.get("compare") or tables[0].column_names)
    refs = [FaultRef(f["history_index"], f["batch"], f["point"], f["description"]) for f in faults]
    result = check_tables(*tables, identity, faults=refs)
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


def python_source_spec(source: Any, ref: Any, context_options: Mapping[str, Any]) -> dict[str, Any]:
    """The run spec of a Python ``DataSource`` under test (a :class:`~harness.sources.reader.SourceUnderTest` and its
    :class:`~harness.sources.loading.Ref`): its options are the context's, overridden by the source's own."""
    options = {**{str(k): str(v) for k, v in context_options.items()}, **source.options}
    return {"kind": "python", "format": source.name, "options": options, "python_ref": [ref.module, ref.attr]}


class _Rules:
    """The run's kill rules, saved as its fault plan each time one is added."""

    def __init__(self, paths: RunPaths, echo: Callable[[str], None]) -> None:
        self.paths, self.echo = paths, echo
        self.rules: list[FaultRule] = []

    def arm(self, point: str, seq: int, at_least: int = 0, nth: int | None = None) -> None:
        """Add a kill at ``point`` of the batch the next run will plan, or of batch ``at_least`` if later; with
        ``nth``, of the ``nth`` batch the next run commits (see the module docstring)."""
        latest = latest_batch_id(self.paths.checkpoint)
        batch = max(at_least, 0 if latest is None else latest + 1)
        if nth is not None:
            committed = batch_ids(self.paths.checkpoint / "commits")
            batch = (committed[-1] if committed else -1) + max(1, nth)
            if point == marking("offsets") and latest is not None:
                batch = max(batch, latest + 1)  # the watcher fires on offsets files that appear, not on old ones
        self.rules.append(FaultRule(f"k{seq}", point, batch))
        FaultPlan(tuple(self.rules)).save(self.paths.faults / "plan.json")
        self.echo(f"  armed k{seq}: kill at {point} of batch {batch}")


def run_source(
    run_dir: Path,
    spec: dict[str, Any],
    feed: Feeder,
    rounds: int,
    kill_points: Sequence[str | None],
    echo: Callable[[str], None],
    timeout_s: float = 300.0,
    kill_batch: int = 0,
    kills_optional: bool = False,
    pool: DriverPool | None = None,
    kill_nth: Sequence[int] | None = None,
) -> SourceOutcome:
    """Play the run (see the module docstring); never raises for a run that went wrong: ``outcome.error``.
    Each kill is planned for batch ``kill_batch`` or later (the checkpoint that many batches in). A kill that
    never fired is an error unless ``kills_optional`` (then it is listed in ``outcome.unfired``). ``pool``
    lends a running driver (left open; default master and confs); without it the run starts its own, with a ready
    standby when it kills the driver twice or more.
    ``kill_nth`` (context-less runs): round ``r``'s kill is in the ``kill_nth[r]``-th batch it commits."""
    t0 = time.monotonic()
    paths = RunPaths(Path(run_dir).resolve())
    paths.create()
    paths.source_run.write_text(json.dumps({**spec, "handler": HANDLER}, indent=2))
    paths.checkpoint.mkdir(exist_ok=True)
    outcome = SourceOutcome(paths.root)
    rules = _Rules(paths, echo)
    history = History(paths.history)
    own = pool is None
    kills = sum(p is not None for p in kill_points)  # a lent pool keeps its own standby setting
    active = pool or DriverPool(paths.logs, DEFAULT_MASTER, {}, standby=standby_for_kills(kills))
    downtime = [0]

    def while_down() -> None:  # data keeps arriving while the driver is dead
        if own and len(run.kills_fired) >= kills:  # after the last kill no standby is started again, as in `run`
            active.keep_standby(False)
        downtime[0] += 1
        fed = feed(rounds + downtime[0] - 1)
        history.append("ok", "runner", "add_data", {"round": f"while down {downtime[0]}", **fed})

    run = Conductor(paths, active, history, lambda m: echo(f"  {m}"), timeout_s, lambda: len(rules.rules) + 2)
    run.on_crash = while_down
    try:
        for r in range(rounds):
            fed = feed(r)
            history.append("ok", "runner", "add_data", {"round": r + 1, **fed})
            if r < len(kill_points) and kill_points[r] is not None:
                nth = kill_nth[r] if kill_nth is not None and r < len(kill_nth) else None
                rules.arm(str(kill_points[r]), r + 1, at_least=kill_batch, nth=nth)
            before = latest_batch_id(paths.checkpoint)
            run.drive("run")
            if latest_batch_id(paths.checkpoint) == before and fed.get("rows", 1):
                outcome.stalls.append(r + 1)
                history.append("info", "runner", "stalled", {"round": r + 1, "batch": before})
                echo(f"  round {r + 1}: data was added but no new batch was planned")
        history.append("info", "runner", "heal", {})
        run.drive("run")
        msg = run.drive("check")
        echo(f"  oracle: {msg['expected_rows']} rows expected, {msg['observed_rows']} visible")
        missing = never_fired(FaultPlan(tuple(rules.rules)), read_ledger(paths.faults))
        outcome.unfired = [r.describe() for r in missing]
        if missing and not kills_optional:
            outcome.error = "planned fault(s) never fired: " + "; ".join(outcome.unfired)
        outcome.result = verdict(paths.root, spec, run.kills_fired)
        history.append("ok", "runner", "check", {"verdict": outcome.result.verdict})
    except (RuntimeError, TimeoutError, OSError, ValueError) as exc:  # HarnessError, CheckpointError, a context's
        outcome.error = str(exc) or type(exc).__name__
    finally:
        if own:
            active.close()
        history.close()
    outcome.kills_fired, outcome.driver_starts = run.kills_fired, run.driver_starts
    outcome.duration_s = time.monotonic() - t0
    return outcome
