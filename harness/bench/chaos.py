"""The chaos part of ``harness bench``: examples per minute of the new design
(one shared driver with a warm standby, soft faults in place, start-up trims)
over the cold-restart design (a new driver per example and per hard kill), on
the same schedules; see :data:`DESIGNS`."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fault_injectors.actions import RAISE
from fault_injectors.plan import FaultRule
from fault_injectors.registry import kills_driver
from harness.engine.pool import DriverPool
from harness.engine.rundir import RunPaths
from harness.engine.runner import Runner
from harness.engine.spec import RunSpec
from harness.spark.cds import CDS_ENV
from harness.spark.session import ZIP_IMPORTS_ENV
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
                FaultRule("s", "sink.write.mid", 0, 0, 5, action=RAISE.name),
                FaultRule("h", "after_offsets_logged", 2),
            ),
        )
        for i in range(examples)
    ]


def campaign_specs(scenario: str, examples: int, profile: str = "ci", seed_value: int = 1) -> list[RunSpec]:
    """The first ``examples`` schedules a ``profile`` campaign with ``seed_value`` generates (its mix of soft
    faults and hard kills), drawn by Hypothesis without running them."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    from harness.chaos.profiles import get_profile
    from harness.chaos.strategies import chaos_specs

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


#: What the drivers of the cold-restart design ran before the start-up trims of the new design:
#: no class-data archive (harness.spark.cds), pyspark imported from Spark's zip (harness/spark/sitepath).
UNTRIMMED_ENV = {CDS_ENV: "0", ZIP_IMPORTS_ENV: "1"}
#: ``pooled``: the new design (one shared driver, warm standby, soft faults in place, start-up
#: trims); ``cold``: the cold-restart design as it was (a new driver per example and per hard
#: kill, Spark's start-up); ``cold_trimmed``: the cold design with the new start-up trims.
DESIGNS = ("pooled", "cold", "cold_trimmed")


@contextmanager
def startup(trimmed: bool) -> Iterator[None]:
    """Drivers started inside this block use the harness's start-up trims, or (``trimmed=False``)
    the start-up of the cold-restart design (:data:`UNTRIMMED_ENV`)."""
    saved = {k: os.environ.get(k) for k in UNTRIMMED_ENV}
    for key in UNTRIMMED_ENV:  # a user's opt-out must not turn the trimmed designs into cold ones
        os.environ.pop(key, None)
    if not trimmed:
        os.environ.update(UNTRIMMED_ENV)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def chaos_rate(work: Path, label: str, specs: list[RunSpec], design: str) -> dict[str, Any]:
    """Examples per minute for ``specs`` in one of :data:`DESIGNS`."""
    t0 = time.monotonic()
    hard = sum(kills_driver(r.action) for s in specs for r in s.extra_faults)
    with startup(design != "cold"):
        if design == "pooled":
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
