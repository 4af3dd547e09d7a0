"""Rendering a run's outcome: a short human report and a JSON document.

Text layout: first line a summary (for a pipeline whose own code raised: the exception, its file:line and batch;
then where it was called from and Spark's error, one line, no stack trace); then, per anomaly kind, at most
``MAX_PER_KIND`` examples with batch id, offset range per partition, the
fault that preceded it (history index) and the row as ``field=value``;
"and N more" when capped; last line the replay command.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.plan import BOUNDARY_POINTS, PURGE_POINT
from harness.engine.commandline import harness_command
from harness.verdict.allowed import allowed_summary
from harness.verdict.checker import KINDS, Anomaly
from harness.verdict.raised import short_frame
from harness.verdict.rowdiff import row_diff

if TYPE_CHECKING:
    from harness.engine.outcome import RunOutcome

MAX_PER_KIND = 8


def _row(row: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in row.items())


def _short_offset(text: Any) -> str:
    """A source offset as a reader says it: ``Delta v3 file -1`` for a Delta source's (reservoir version, file
    index), else the offset's JSON text as it is."""
    import json

    try:
        raw = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return str(text)
    if isinstance(raw, dict) and "reservoirVersion" in raw:
        starting = " (snapshot)" if raw.get("isStartingVersion") else ""
        return f"Delta v{raw['reservoirVersion']} file {raw.get('index', -1)}{starting}"
    return str(text)


def _anomaly_line(a: Anomaly) -> str:
    where = f"batch {a.batch_id}" if a.batch_id is not None else "no batch covers it"
    rng = ""
    if a.offset_range:
        rng = " offsets " + ", ".join(
            f"[{_short_offset(s)}, {_short_offset(e)})" if p == "source" else f"p{p}:[{s},{e})"
            for p, (s, e) in a.offset_range.items()
        )
    fault = f"; after fault #{a.fault.history_index} ({a.fault.description})" if a.fault else "; no fault preceded it"
    if a.sink_where:
        fault += f"; {a.sink_where}"
    if a.deploy:
        fault += f"; {a.deploy}"
    if a.detail:
        shown = f"\n      {_row(a.row)}" if a.kind == "state-mismatch" else ""
        return f"  - {where}{fault}\n      {a.detail}{shown}"
    if a.observed_row is not None:
        diff = " ".join(f"{k}={a.row.get(k)}->{v}" for k, v in a.observed_row.items() if a.row.get(k) != v)
        return f"  - {where}{rng}: {diff}{fault}\n      expected {_row(a.row)}"
    count = f" seen {a.observed_count}x, expected {a.expected_count}x"
    return f"  - {where}{rng}:{count}{fault}\n      {_row(a.row)}"


def boundary_label(kill: dict[str, Any]) -> str:
    """`` [<boundaries> batch]`` after a fired fault that hit Spark's maintenance boundaries (``""`` for none);
    without ``batch`` for a retention purge, which hit the maintenance task rather than a batch."""
    if not kill.get("boundaries"):
        return ""
    return f" [{', '.join(kill['boundaries'])}{'' if kill.get('point') == PURGE_POINT else ' batch'}]"


def summary_line(outcome: RunOutcome) -> str:
    ctx = f"(scenario={outcome.spec.scenario}, seed={outcome.spec.seed})"
    if outcome.refused is not None and not outcome.error:
        return f"upgrade-refused {ctx}: {outcome.refused.describe()}"
    if outcome.failure is not None and not outcome.error:
        return f"pipeline failed: {outcome.failure.describe()}; the pipeline's own code raised {ctx}"
    if outcome.recovery is not None:
        return f"recovery failed {ctx}: {outcome.recovery.describe()}"
    if outcome.error and outcome.query_failed:
        return f"query failed loudly, no verdict {ctx}: {outcome.error.splitlines()[0]}"
    if outcome.error:
        return f"harness error, no verdict {ctx}: {outcome.error.splitlines()[0]}"
    result = outcome.result
    assert result is not None
    if result.verdict == "unknown":
        return f"verdict unknown {ctx}: {(result.error or '').splitlines()[0] if result.error else ''}"
    allowed = allowed_summary(result)
    if result.verdict == "exactly-once":
        if allowed:
            return f"exactly-once held {ctx} but for {allowed}: not a violation"
        kills = [k for k in outcome.kills_fired if k.get("point") != "deploy"]
        across = f" across a deploy of {outcome.spec.upgrade_to}" if outcome.spec.upgrade_to else ""
        return (
            f"exactly-once held {ctx}{across}: {result.observed_rows} rows match the oracle, "
            f"{len(kills)} kill(s) fired, {len(outcome.batches)} batches"
        )
    counts = result.counts()
    parts = ", ".join(f"{counts[k]} {k}" for k in KINDS if k in counts)
    return f"exactly-once violated: {parts} {ctx}" + (f"; besides, {allowed}" if allowed else "")


def render_text(outcome: RunOutcome, *, color: bool = False) -> str:
    """The run's report: summary, faults, anomalies per kind, the rows of the anomalous keys side by side
    (chispa; ``color`` for a terminal), the checkpoint summary and the replay command."""
    lines = [summary_line(outcome)]
    if outcome.kills_fired:
        lines.append("faults fired:")
        lines += [f"  #{k['history_index']} {k['description']}" + boundary_label(k) for k in outcome.kills_fired]
    if not outcome.spec.deterministic:
        rules = outcome.spec.extra_faults
        kinds = ["timed"] * any(r.timed for r in rules) + ["state-maintenance"] * any(
            r.point in BOUNDARY_POINTS for r in rules
        )
        lines.append(
            f"  {' and '.join(kinds)} kill(s): NOT deterministic. A replay kills a few ms elsewhere and may not "
            "reproduce this run; "
            "`replay BUNDLE --times N` reports how often it does"
        )
    if outcome.state_check is not None:
        lines.append(outcome.state_check.describe())
    if outcome.refused is not None:
        lines.append(f"  Spark's error: {outcome.refused.message.splitlines()[0][:400]}")
        if outcome.refused.rule is not None:
            lines.append(f"  the programming guide: {outcome.refused.rule.says}")
    if outcome.failure is not None:
        raised = outcome.failure.raised
        if raised.outer != raised.frame:
            lines.append(f"  called from {short_frame(raised.outer)}")
        if outcome.failure.spark:
            lines.append(f"  Spark's error: {outcome.failure.spark}")
    if outcome.error and outcome.error.count("\n"):
        lines += ["  " + line for line in outcome.error.splitlines()[1:]]
    result = outcome.result
    if result is not None and result.anomalies:
        for kind in KINDS:
            of_kind = [a for a in result.anomalies if a.kind == kind]
            if not of_kind:
                continue
            lines.append(f"{kind} ({len(of_kind)} row(s)):")
            lines += [_anomaly_line(a) for a in of_kind[:MAX_PER_KIND]]
            if len(of_kind) > MAX_PER_KIND:
                lines.append(f"  ... and {len(of_kind) - MAX_PER_KIND} more")
    for kind, heading in (
        ("lost", "lost as the configuration allows"),
        ("duplicate", "delivered again after a fresh checkpoint"),
    ):
        allowed = [a for a in result.allowed if a.kind == kind] if result is not None else []
        if not allowed:
            continue
        lines.append(f"{heading} ({len(allowed)} row(s), not a violation):")
        lines += [
            f"  - batch {a.batch_id} partition {a.partition} offset {a.offset}: {_row(a.row)}"
            for a in allowed[:MAX_PER_KIND]
        ]
        if len(allowed) > MAX_PER_KIND:
            lines.append(f"  ... and {len(allowed) - MAX_PER_KIND} more")
    diff = row_diff(result.anomalies, color=color) if result is not None else None
    if diff:
        lines.append(diff)
    if outcome.inspector_summary:
        lines.append("checkpoint (python -m harness inspect):")
        lines += ["  " + line for line in outcome.inspector_summary.splitlines()]
    if outcome.kept_run_dir:
        lines.append(f"run directory kept: {outcome.paths.root}")
    lines.append(f"replay: {outcome.spec.replay_command()}")
    return "\n".join(lines)


def to_json(outcome: RunOutcome) -> dict[str, Any]:
    result = outcome.result
    return {
        "verdict": outcome.verdict,
        "scenario": outcome.spec.scenario,
        "expected_guarantee": outcome.expected_guarantee,
        "seed": outcome.spec.seed,
        "spec": asdict(outcome.spec),
        "schedule": outcome.schedule_lines,
        "kills_planned": outcome.kills_planned,
        "kills_fired": outcome.kills_fired,
        "deterministic": outcome.spec.deterministic,
        "batches": outcome.batches,
        "anomaly_counts": result.counts() if result else {},
        "anomalies": [asdict(a) for a in result.anomalies] if result else [],
        "allowed_losses": [asdict(w) for w in result.allowed_losses] if result else [],
        "allowed_replays": [asdict(r) for r in result.allowed_replays] if result else [],
        "allowed": [asdict(a) for a in result.allowed] if result else [],
        "expected_rows": result.expected_rows if result else None,
        "observed_rows": result.observed_rows if result else None,
        "final_state": outcome.state_check.to_json() if outcome.state_check else None,
        "error": outcome.error or (result.error if result else None),
        "query_failed": outcome.query_failed,
        "upgrade_refused": outcome.refused.to_json() if outcome.refused else None,
        "pipeline_failed": outcome.failure.to_json() if outcome.failure else None,
        "recovery_failed": outcome.recovery.to_json() if outcome.recovery else None,
        "inspector": outcome.inspector_summary,
        "run_dir": str(outcome.paths.root) if outcome.kept_run_dir else None,
        "history": str(outcome.paths.history) if outcome.kept_run_dir else None,
        "duration_s": round(outcome.duration_s, 2),
        "replay": outcome.spec.replay_command(),
    }


def campaign_tail(anomalies: list[dict[str, Any]], bundle: object, rerun: str, *, color: bool = False) -> list[str]:
    """The last lines of a campaign's report: the minimal failure's rows side by side (chispa), then how to
    reproduce it: ``replay BUNDLE`` when there is a bundle, else ``rerun`` (the campaign's own command line)."""
    lines = []
    diff = row_diff(anomalies, color=color)
    if diff:
        lines.append(diff)
    if bundle and (Path(str(bundle)) / "timeline.html").exists():
        lines.append(f"timeline: {Path(str(bundle)) / 'timeline.html'}")
    lines.append(f"replay: {harness_command('replay', bundle)}" if bundle else f"rerun: {rerun}")
    return lines
