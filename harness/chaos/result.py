"""A campaign's result: its examples and verdict (:class:`CampaignResult`), the final text table
(:func:`render_campaign`), the state axes it exercised, and its JSON document (:func:`campaign_doc`, what
``chaos --json`` writes and ``merge`` reads)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fault_injectors.plan import STEP_POINT, TIMED_POINT
from harness.chaos.profiles import PROFILES, Profile
from harness.chaos.shards import BLOCK_EXAMPLES
from harness.chaos.strategies import describe_spec
from harness.engine.commandline import harness_command
from harness.engine.outcome import EXIT_CODES, PIPELINE_FAILED, RECOVERY_FAILED, UPGRADE_REFUSED
from harness.engine.report import campaign_tail
from harness.engine.spec import RunSpec
from scenarios import get_scenario


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
    #: ``"I/N"`` when this is one shard of a campaign (:mod:`harness.chaos.shards`), and the blocks it ran.
    shard: str | None = None
    blocks: list[int] = field(default_factory=list)
    #: The example database shared with other shards and reruns, and how many saved failures it replayed first.
    database: str | None = None
    replayed_first: int = 0
    nemesis: tuple[str, ...] = ()
    #: The bundle of the minimal failure's schedule without faults, when that violates too
    #: (:mod:`harness.chaos.faultfree`).
    fault_free: Path | None = None

    @property
    def verdict(self) -> str:
        if self.error:
            return "unknown"
        if self.failure is not None:
            return UPGRADE_REFUSED if self.failure.verdict == UPGRADE_REFUSED else "violated"
        return "exactly-once"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.verdict, 2)

    def assert_exactly_once(self) -> None:
        """Raise ``AssertionError`` with the campaign report unless no violation was found."""
        if self.verdict != "exactly-once":
            raise AssertionError(self.render())

    def render(self, *, color: bool = False) -> str:
        """The campaign report (:func:`render_campaign`)."""
        return render_campaign(self, color=color)

    @property
    def subject_name(self) -> str:
        return self.scenario


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
    shard = f", shard={result.shard}" if result.shard else ""
    ctx = f"(scenario={result.scenario}, seed={result.seed}, profile={result.profile.name}{shard})"
    if result.error:
        head = f"campaign error, no verdict {ctx}: {result.error.splitlines()[0]}"
    elif result.failure and result.failure.verdict == PIPELINE_FAILED:
        faults = len(result.failure.spec.extra_faults) + len(result.failure.spec.nemesis)
        head = f"pipeline failed, shrunk to {faults} fault step(s) {ctx}"
    elif result.failure and result.failure.verdict == RECOVERY_FAILED:
        faults = len(result.failure.spec.extra_faults) + len(result.failure.spec.nemesis)
        head = f"recovery failed: Spark could not resume from the checkpoint, shrunk to {faults} fault step(s) {ctx}"
    elif result.failure and result.failure.verdict == UPGRADE_REFUSED:
        head = f"upgrade refused by Spark, shrunk to the simplest deploy {ctx}"
    elif result.failure:
        faults = len(result.failure.spec.extra_faults) + len(result.failure.spec.nemesis)
        expected = " (expected: this sink is at-least-once)" if result.guarantee == "at-least-once" else ""
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
        *_shard_lines(result),
        f"  wall time         {result.duration_s:.0f} s ({per_min:.1f} examples/min)",
    ]
    if result.failure:
        lines += [f"  minimal schedule  {describe_spec(result.failure.spec)}", f"  {result.failure.summary}"]
    unknown = [r for r in result.examples if r.verdict == "unknown"]
    if unknown:  # an example without a verdict proves nothing: say why, not only how many
        lines.append(f"  no verdict        {len(unknown)} example(s); the first: {unknown[0].summary}")
    if result.fault_free is not None:
        too = "the query fails too" if result.failure and result.failure.verdict == RECOVERY_FAILED else "violated too"
        lines += [
            f"  without faults    {too}: no fault is needed (the fault above is not the cause)",
            f"  fault-free replay {harness_command('replay', str(result.fault_free))}",
        ]
    rerun = rerun_command(result)
    anomalies = (result.failure_report or {}).get("anomalies", []) if result.failure else []
    lines += campaign_tail(anomalies, result.bundle, rerun, color=color)
    return "\n".join(lines)


def campaign_command(
    scenario: str,
    seed: int,
    profile: Profile,
    *,
    shard: str | None = None,
    database: str | None = None,
    nemesis: tuple[str, ...] = (),
    workers: int = 1,
    master: str = "local[2]",
) -> str:
    """The ``chaos`` command line of a campaign: what the CLI prints before it starts and the report after.
    A ``database`` shown as ``<Type>`` (an object given through the API) has no command-line form."""
    budget = profile.shrink_budget_s
    args: list[object] = ["chaos", scenario, "--examples", profile.examples, "--seed", seed, "--profile", profile.name]
    if shard:
        args += ["--shard", shard]
    if database and not database.startswith("<"):
        args += ["--database", database]
    if nemesis:
        args += ["--nemesis", ",".join(nemesis)]
    if workers > 1:
        args += ["--workers", workers]
    if master != "local[2]":
        args += ["--master", master]
    if profile.volume is not None:
        args += ["--volume", profile.volume]
    if profile.batch_rows is not None:
        args += ["--batch-rows", profile.batch_rows]
    if profile.triggers:
        args += ["--trigger", ",".join(profile.triggers)]
    if profile.rounds is not None:
        args += ["--rounds", profile.rounds]
    if budget != PROFILES[profile.name].shrink_budget_s:
        args += ["--shrink-budget", f"{budget:g}"]
    return harness_command(*args)


def source_campaign_command(subject: Sequence[str], profile: Profile, seed: int) -> str:
    """The ``chaos --source`` command line of a campaign over a connector's source; ``subject`` is its
    ``--source PATH.py:CLASS [--context ...] [--option K=V ...]`` arguments."""
    return harness_command("chaos", *subject, "--examples", profile.examples, "--seed", seed, "--profile", profile.name)


def rerun_command(result: CampaignResult) -> str:
    """The command line that runs the same campaign (the same shard, with the same database) again."""
    return campaign_command(result.scenario, result.seed, result.profile, shard=result.shard,
                            database=result.database, nemesis=result.nemesis, workers=result.workers,
                            master=result.master)  # fmt: skip


def _shard_lines(result: CampaignResult) -> list[str]:
    lines = []
    if result.shard:
        ran = ", ".join(str(b) for b in result.blocks) or "none"
        lines.append(f"  shard             {result.shard}: block(s) {ran} (up to {BLOCK_EXAMPLES} examples each)")
    if result.database:
        lines.append(f"  example database  {result.database} ({result.replayed_first} saved failure(s) replayed first)")
    return lines


def campaign_doc(result: CampaignResult, beside: Path | None = None) -> dict[str, Any]:
    """The campaign as JSON (``chaos --json``): what ``merge`` combines across shards. Paths are absolute;
    with ``beside`` (the JSON file's directory) ``bundle_rel``/``timeline_rel`` are also given relative to it,
    so a CI artifact holding both still links its bundle after it is downloaded elsewhere."""
    failure = result.failure
    timeline = result.bundle / "timeline.html" if result.bundle else None

    def rel(path: Path | None) -> str | None:
        if path is None or beside is None or not Path(path).exists():
            return None
        return os.path.relpath(Path(path).resolve(), Path(beside).resolve())

    return {
        "kind": "campaign",
        "scenario": result.scenario,
        "guarantee": result.guarantee,
        "seed": result.seed,
        "profile": result.profile.name,
        "examples_planned": result.profile.examples,
        "volume": result.profile.volume,
        "batch_rows": result.profile.batch_rows,
        "nemesis": list(result.nemesis),
        "master": result.master,
        "shard": result.shard,
        "blocks": result.blocks,
        "block_examples": BLOCK_EXAMPLES,
        "database": result.database,
        "replayed_first": result.replayed_first,
        "verdict": result.verdict,
        "examples": len(result.examples),
        "faults_fired": sum(len(r.faults_fired) for r in result.examples),
        "driver_starts": result.driver_starts,
        "workers": result.workers,
        "duration_s": round(result.duration_s, 1),
        "error": result.error,
        "bundle": str(Path(result.bundle).resolve()) if result.bundle else None,
        "timeline": str(Path(timeline).resolve()) if timeline and Path(timeline).exists() else None,
        "bundle_rel": rel(result.bundle),
        "timeline_rel": rel(timeline),
        "minimal_schedule": describe_spec(failure.spec) if failure else None,
        "minimal_faults": [r.describe() for r in failure.spec.extra_faults] if failure else None,
        "summary": failure.summary if failure else None,
        "fault_free_bundle": str(Path(result.fault_free).resolve()) if result.fault_free else None,
        "fault_free_bundle_rel": rel(result.fault_free),
        "rerun": rerun_command(result),
        "failure": result.failure_report,
    }


def _point_of(fault: str) -> str:
    """The crash point of a fired fault's description (``sink.step`` for ``... after step K of batch N ...``)."""
    if " after step " in fault:
        return STEP_POINT
    if "(timed, not deterministic)" in fault:
        return TIMED_POINT
    return fault.split(" at ")[1].split(" of ")[0] if " at " in fault else ""
