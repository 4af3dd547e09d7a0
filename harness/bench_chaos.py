"""The chaos part of ``harness bench``: examples per minute of the pooled design
(one shared driver with a warm standby, soft faults in place) over the cold
design (a new driver per example, cold restarts), on the same schedules."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from fault_injectors.plan import FaultRule
from harness.pool import DriverPool
from harness.rundir import RunPaths
from harness.runner import Runner
from harness.spec import RunSpec
from scenarios import get_scenario

CAMPAIGN_LABELS = ("campaign_file_sink_stateless", "campaign_agg_watermark_append")
WORST_LABELS = ("worst_file_sink_stateless", "worst_agg_watermark_append")


def chaos_workloads(quick: bool) -> list[tuple[str, list[RunSpec]]]:
    """(label, schedules): the ci campaign's own schedules (its soft/hard mix) and the worst case."""
    n_campaign, n_worst = (4, 2) if quick else (8, 3)
    loads = []
    for scenario in ("file_sink_stateless", "agg_watermark_append"):
        loads.append((f"campaign_{scenario}", campaign_specs(scenario, n_campaign)))
        loads.append((f"worst_{scenario}", worst_case_specs(scenario, n_worst)))
    return loads


def worst_case_specs(scenario: str, examples: int) -> list[RunSpec]:
    """Schedules with one soft and one hard fault each: a JVM restart in every example."""
    parts = get_scenario(scenario).partitions
    return [
        RunSpec(
            scenario,
            100 + i,
            kills=0,
            rows=((30,) * parts, (25,) * parts),
            extra_faults=(
                FaultRule("s", "sink.write.mid", 0, 0, 5, action="raise"),
                FaultRule("h", "after_offsets_logged", 2),
            ),
        )
        for i in range(examples)
    ]


def campaign_specs(scenario: str, examples: int, profile: str = "ci", seed_value: int = 1) -> list[RunSpec]:
    """The first ``examples`` schedules a ``profile`` campaign with ``seed_value`` generates (its mix of soft
    faults and hard kills), drawn by Hypothesis without running them."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    from harness.profiles import get_profile
    from scenarios.strategies import chaos_specs

    prof = get_profile(profile)
    drawn: list[RunSpec] = []
    strategy = chaos_specs(
        get_scenario(scenario), max_rounds=prof.max_rounds, max_faults=prof.max_faults,
        hard_kill_ratio=prof.hard_kill_ratio, ref=scenario,
    )  # fmt: skip

    @seed(seed_value)
    @settings(max_examples=examples, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def collect(spec: RunSpec) -> None:
        drawn.append(spec)

    collect()
    return drawn[:examples]


def chaos_rate(work: Path, label: str, specs: list[RunSpec], pooled: bool) -> dict[str, Any]:
    """Examples per minute for ``specs``: pooled design (one shared driver with a warm standby,
    soft faults in place) or cold design (a new driver per example, cold restarts)."""
    t0 = time.monotonic()
    design = "pooled" if pooled else "cold"
    hard = sum(r.action == "kill_process_group" for s in specs for r in s.extra_faults)
    if pooled:
        with DriverPool(work / f"{label}-{design}-logs", "local[2]", {}, standby=True) as pool:
            for i, spec in enumerate(specs):
                Runner(spec, RunPaths(work / f"{label}-{design}-{i}"), echo=lambda m: None, pool=pool).execute()
    else:
        for i, spec in enumerate(specs):
            paths = RunPaths(work / f"{label}-{design}-{i}")
            with DriverPool(paths.logs, "local[2]", {}) as pool:
                Runner(spec, paths, echo=lambda m: None, pool=pool).execute()
    minutes = (time.monotonic() - t0) / 60
    return {"examples": len(specs), "hard_kills": hard, "minutes": minutes, "per_minute": len(specs) / minutes}
