"""``bench``'s cost of step tracing: a ``foreachBatch`` SQLite upsert behind ``rate-micro-batch``, three ways.

- ``bare``: :func:`scenarios.sinks.upsert_into_sqlite` as a user writes it;
- ``wrapped``: the same function inside :func:`fault_injectors.sinks.crash_injecting_foreach_batch` with a
  fault plan whose rules (named points and a ``sink.step``) aim at a batch that never comes: what every call
  of a run costs when no fault is planned for it (the function runs untraced);
- ``traced``: the same wrapper with a census plan: every call is traced step by step, which is what the one
  call a ``sink.step`` rule is armed for pays, and what a census run pays throughout.

``step_tracing_overhead_ratio`` is wrapped over bare (target <= 1.1x); ``step_census_overhead_ratio`` is
traced over bare. The three queries are interleaved ``reps`` times in one session, each a fresh database and
checkpoint, and the median trigger time of ``batches`` steady batches is taken (two warm-up batches dropped).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fault_injectors.actions import RAISE
from fault_injectors.crash import PLAN_FILE, FaultSite
from fault_injectors.plan import STEP_POINT, FaultPlan, FaultRule

#: A batch id no bench query reaches: the plan's rules are loaded and matched, and never fire.
NEVER = 10**9


def batch_durations(query: Any, want: int) -> list[float]:
    """Wait for ``want`` batches with input rows, stop ``query``; trigger seconds of batches 3..``want``."""
    while len([p for p in query.recentProgress if p.numInputRows]) < want and query.isActive:
        time.sleep(0.05)
    query.stop()
    done = [p for p in query.recentProgress if p.numInputRows]
    return [p.durationMs["triggerExecution"] / 1000.0 for p in done[2:want]]  # 2 warm-up batches


def _site(fault_dir: Path, census: bool) -> FaultSite:
    rules = (
        FaultRule("never-step", STEP_POINT, NEVER, step=1, wrapper="foreach_batch", action=RAISE.name),
        FaultRule("never-before", "sink.commit.before", NEVER, action=RAISE.name),
        FaultRule("never-after", "sink.commit.after", NEVER, action=RAISE.name),
    )
    fault_dir.mkdir(parents=True, exist_ok=True)
    FaultPlan(rules, seed=0, census=census).save(fault_dir / PLAN_FILE)
    return FaultSite(fault_dir)


def step_tracing(work: Path, rows: int, batches: int, reps: int) -> dict[str, Any]:
    """Median batch seconds per variant (min/median/max over ``reps``) and the two ratios."""
    from fault_injectors.sinks import crash_injecting_foreach_batch
    from harness.spark.session import build_session
    from scenarios.sinks import upsert_into_sqlite

    spark = build_session("harness-bench-steps")
    spark.sparkContext.setLogLevel("FATAL")
    variants: dict[str, Callable[[Path], Callable[..., None]]] = {
        "bare": lambda d: upsert_into_sqlite(d / "sink.db"),
        "wrapped": lambda d: crash_injecting_foreach_batch(upsert_into_sqlite(d / "sink.db"), _site(d / "f", False)),
        "traced": lambda d: crash_injecting_foreach_batch(upsert_into_sqlite(d / "sink.db"), _site(d / "f", True)),
    }
    results: dict[str, list[float]] = {name: [] for name in variants}
    try:
        for rep in range(reps):
            for name, make in variants.items():
                d = work / f"steps-{rep}-{name}"
                d.mkdir(parents=True)
                q = (
                    spark.readStream.format("rate-micro-batch")
                    .option("rowsPerBatch", rows)
                    .load()
                    .writeStream.foreachBatch(make(d))
                    .option("checkpointLocation", str(d / "checkpoint"))
                    .start()
                )
                results[name].append(statistics.median(batch_durations(q, batches + 2)))
    finally:
        spark.stop()
    out: dict[str, Any] = {
        name: {"min": min(v), "median": statistics.median(v), "max": max(v), "n": len(v)} for name, v in results.items()
    }
    bare = out["bare"]["median"]
    out["step_tracing_overhead_ratio"] = out["wrapped"]["median"] / bare
    out["step_census_overhead_ratio"] = out["traced"]["median"] / bare
    out["rows_per_batch"] = rows
    return out
