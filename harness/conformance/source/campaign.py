"""Chaos campaigns over a connector's own source: ``python -m harness chaos --source path.py:Class [--context ...]``.

Hypothesis draws a :class:`SourceSchedule` (rounds of data the context adds, and in each round an optional
SIGKILL at a crash point of the batch that round plans; without a context, the batches each round lets the
source plan and in which of them the kill lands), every example is one end-to-end source run on the
harness's one engine (:func:`.run.run_source`: the source feeds the parquet file sink, which is
exactly-once on its own, so every lost, duplicated or changed row is the source's), all examples share one
driver pool with a warm standby, a violation is shrunk (fewer rounds, fewer rows, fewer and earlier kills)
within the profile's shrink budget and saved as a bundle that ``python -m harness replay`` reruns.
An example whose planned kill never fired (no batch was planned for it) is discarded and counted in the report;
a campaign that discards as many examples as it was asked to run runs no more and ends without a verdict.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, assume, given, seed, settings
from hypothesis.errors import Unsatisfiable

from harness.chaos.profiles import Profile
from harness.chaos.result import source_campaign_command
from harness.chaos.seeded import seed_only_draws
from harness.conformance.source.bundle import write_source_bundle
from harness.conformance.source.run import SourceOutcome
from harness.conformance.source.schedule import (
    RAISED,
    SourceSchedule,
    SourceSubject,
    anomalies_of,
    counts_text,
    play,
    schedules_for,
    verdict_of,
)
from harness.errors import HarnessFailure


@dataclass
class SourceExample:
    index: int
    schedule: SourceSchedule
    verdict: str
    counts: dict[str, int]
    duration_s: float


@dataclass
class SourceCampaignResult:
    subject: SourceSubject
    seed: int
    profile: Profile
    examples: list[SourceExample] = field(default_factory=list)
    failure: SourceExample | None = None
    bundle: Path | None = None
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    duration_s: float = 0.0
    #: Examples run but discarded (their passing run left a planned kill unfired): index -> the kills.
    discarded: dict[int, list[str]] = field(default_factory=dict)
    #: The minimal failure's cause when the source's own code raised (exception, message, file:line).
    cause: str | None = None

    @property
    def verdict(self) -> str:
        return "unknown" if self.error else "violated" if self.failure else "exactly-once"

    @property
    def exit_code(self) -> int:
        return {"exactly-once": 0, "violated": 1}.get(self.verdict, 2)

    @property
    def subject_name(self) -> str:
        return self.subject.source

    def render(self, *, color: bool = False) -> str:
        """The campaign report (:func:`render_source_campaign`)."""
        return render_source_campaign(self, color=color)

    def assert_exactly_once(self) -> None:
        """Raise ``AssertionError`` with the campaign report unless no violation was found."""
        if self.verdict != "exactly-once":
            raise AssertionError(self.render())


class _InfraError(HarnessFailure, RuntimeError):
    """An example gave no verdict (the harness or the source failed to run, not a property violation)."""


def run_source_campaign(
    subject: SourceSubject,
    *,
    seed_value: int,
    profile: Profile,
    work_dir: Path,
    echo: Callable[[str], None] = print,
) -> SourceCampaignResult:
    """``profile.examples`` drawn schedules over the subject's source; the first violation is shrunk within
    ``profile.shrink_budget_s`` and bundled into ``work_dir / "bundle"``."""
    from harness.engine.pool import DriverPool
    from harness.spark.session import DEFAULT_MASTER

    subject.load()  # a bad reference fails here, in one line, before any JVM starts
    work_dir.mkdir(parents=True, exist_ok=True)
    result = SourceCampaignResult(subject, seed_value, profile)
    cache: dict[SourceSchedule, tuple[SourceOutcome, SourceExample]] = {}
    failing: list[tuple[SourceOutcome, SourceExample]] = []
    started, shrinking_since = time.monotonic(), [0.0]
    pool = DriverPool(work_dir / "logs", DEFAULT_MASTER, {}, standby=True)

    def example(schedule: SourceSchedule) -> None:
        if schedule not in cache:
            if shrinking_since[0] and time.monotonic() - shrinking_since[0] > profile.shrink_budget_s:
                assume(False)  # shrink budget spent: only schedules already run are evaluated now
            if len(result.discarded) >= profile.examples:
                assume(False)  # as many examples discarded as asked for: run no more (the campaign reports it)
            index = len(result.examples) + 1
            t0 = time.monotonic()
            outcome = play(subject, schedule, work_dir / f"example-{index:04d}", pool)
            verdict, counts = verdict_of(outcome)
            record = SourceExample(index, schedule, verdict, counts, time.monotonic() - t0)
            result.examples.append(record)
            phase = "shrink" if shrinking_since[0] else f"{index}/{profile.examples}"
            echo(f"[{phase:>7}] {record.duration_s:5.1f}s {verdict:<12} {schedule.describe()}")
            cache[schedule] = (outcome, record)
            if verdict == "exactly-once":
                shutil.rmtree(outcome.run_dir, ignore_errors=True)
        outcome, record = cache[schedule]
        if outcome.unfired and record.verdict == "exactly-once":
            if record.index not in result.discarded:
                result.discarded[record.index] = list(outcome.unfired)
                echo(f"          discarded: planned kill(s) never fired: {'; '.join(outcome.unfired)}")
            assume(False)
        if record.verdict == "unknown":
            raise _InfraError(f"example {record.index} ({schedule.describe()}): {outcome.error}")
        if record.verdict == "violated":
            failing.append((outcome, record))
            if not shrinking_since[0]:
                shrinking_since[0] = time.monotonic()
                echo(
                    f"violation found: {counts_text(record.counts)}; shrinking (budget {profile.shrink_budget_s:.0f} s)"
                )
            raise AssertionError(counts_text(record.counts))

    test = settings(
        max_examples=profile.examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        print_blob=False,
    )(given(schedules_for(subject, profile.max_rounds, profile.max_faults))(example))
    try:
        with seed_only_draws():
            seed(seed_value)(test)()
        if len(result.discarded) >= profile.examples:
            result.error = _unfired_text(result)
    except Unsatisfiable:
        result.error = _unfired_text(result)
    except (AssertionError, _InfraError) as exc:
        if failing:  # a violation stands even if a schedule tried while shrinking gave no verdict
            outcome, record = failing[-1]
            result.failure, result.anomalies = record, anomalies_of(outcome)
            result.cause = outcome.error if RAISED in record.counts else None
            result.bundle = write_source_bundle(subject, record.schedule, seed_value, outcome, work_dir / "bundle")
        else:
            result.error = str(exc)
    finally:
        pool.close()
        result.duration_s = time.monotonic() - started
    return result


def _unfired_text(result: SourceCampaignResult) -> str:
    n = len(result.discarded)
    first = next(iter(result.discarded.values()), ["?"])
    return (
        f"{n} example(s) discarded: a planned kill never fired (e.g. {first[0]}), the source planned no batch for "
        "it" + (" (does its data arrive by itself?)" if result.subject.contextless else "")
    )


def render_source_campaign(result: SourceCampaignResult, *, color: bool = False) -> str:
    """Summary line, counts, the minimal schedule, the rows side by side (chispa) and the replay command."""
    from harness.engine.report import campaign_tail

    verdicts: dict[str, int] = {}
    for e in result.examples:
        verdicts[e.verdict] = verdicts.get(e.verdict, 0) + 1
    ctx = f"(source={result.subject.source}, seed={result.seed}, profile={result.profile.name})"
    if result.error:
        head = f"campaign error, no verdict {ctx}: {result.error.splitlines()[0]}"
    elif result.failure:
        head = f"violation found and shrunk to {result.failure.schedule.describe()} {ctx}"
    else:
        head = f"no violation in {len(result.examples)} example(s) {ctx}"
    lines = [
        head,
        f"  examples run      {len(result.examples)} ({', '.join(f'{v} {k}' for k, v in sorted(verdicts.items()))})",
        f"  kills planned     {sum(e.schedule.kills for e in result.examples)}",
        f"  wall time         {result.duration_s:.0f} s",
    ]
    if result.discarded:
        lines.insert(2, f"  discarded         {len(result.discarded)} ({_unfired_text(result).split(': ', 1)[1]})")
    if result.subject.contextless:
        from harness.conformance.source.bundle import REPLAY_NOTE

        lines.append(
            "  source            context-less (no --context: its data arrives by itself; each round lets it plan "
            "the drawn number of batches)"
        )
        if result.bundle:
            lines.append(f"  replay            {REPLAY_NOTE}; `replay --times N` prints the reproduction rate")
    if result.failure:
        lines.append(f"  anomalies         {counts_text(result.failure.counts)}")
        if result.cause:
            lines.append(f"  cause             {result.cause}")
    rerun = source_campaign_command(result.subject.argv(), result.profile, result.seed)
    lines += campaign_tail(result.anomalies if result.failure else [], result.bundle, rerun, color=color)
    return "\n".join(lines)


def replay_saved(bundle: Path, profile: Profile, work_dir: Path) -> SourceCampaignResult:
    """A saved source bundle replayed once, as a one-example campaign (``failure`` set if it reproduced)."""
    import json

    from harness.conformance.source.bundle import BUNDLE_FILE, load_source_bundle, replay_source_bundle

    doc = json.loads((bundle / BUNDLE_FILE).read_text())
    subject, schedule = load_source_bundle(doc)
    result = SourceCampaignResult(subject, int(doc.get("seed", 0)), profile)
    started = time.monotonic()
    _code, reproduced, verdict = replay_source_bundle(doc, 1, work_dir, lambda m: None)
    record = SourceExample(1, schedule, verdict, dict(doc["anomaly_counts"]), time.monotonic() - started)
    result.examples.append(record)
    if reproduced and verdict == "violated":
        result.failure, result.anomalies, result.bundle = record, list(doc["anomalies"]), bundle
    result.duration_s = record.duration_s
    return result
