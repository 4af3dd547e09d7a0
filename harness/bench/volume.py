"""Bench section ``volume``: what a whole run costs as its data and batches grow, against bare Spark.

For each size in :data:`ROWS` and batch count in :data:`BATCHES`, a fault-free run of ``file_sink_stateless``
(replayable source -> map/filter -> parquet file sink) adds the rows in one round with ``batch_rows`` chosen for
that many batches, on one warmed driver (no JVM start in the figures). Recorded per cell:

- ``run_s``: adding the data and running the query until caught up (the history's ``run`` command);
- ``check_s``: the driver's oracle (the batch read of the same input, both sides to Parquet) and the verdict;
- ``peak_rss_mb``: peak RSS of this process and its descendants (the driver's JVM and its Python workers);
- ``bare_s``: bare Spark writing as many rows in as many batches (``rate-micro-batch`` -> parquet file sink,
  measured in the same bench run, in this process after the harness runs) and ``run_ratio = run_s / bare_s``.

``slope``: log10 of the growth of ``run_s`` and ``check_s`` per 10x rows, at the middle batch count (1.0 = linear).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.engine.history import read_history
from harness.engine.pool import DriverPool
from harness.engine.rundir import RunPaths
from harness.engine.runner import Runner
from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec
from scenarios import get_scenario

ROWS = (10**3, 10**4, 10**5, 10**6)
BATCHES = (10, 50, 200)
SCENARIO = "file_sink_stateless"


def _span_s(history: Path, f: str) -> float:
    """Seconds from the first ``invoke`` of ``f`` to the last ``ok`` of ``f`` (any process) in a history."""
    events = [e for e in read_history(history) if e.f == f]
    start = min(e.time_ns for e in events if e.type == "invoke")
    end = max(e.time_ns for e in events if e.type == "ok")
    return (end - start) / 1e9


def harness_run(pool: DriverPool, work: Path, rows: int, batches: int, sampler: Any) -> dict[str, Any]:
    """One fault-free run of ``rows`` rows in about ``batches`` batches; its figures (see the module)."""
    # file_sink_stateless keeps about 2/3 of the rows (its filter), and its source takes rows, not offsets.
    spec = RunSpec(SCENARIO, 1, kills=0, rounds=1, volume=rows, batch_rows=max(1, math.ceil(rows / batches)))
    paths = RunPaths(work / f"run-{rows}-{batches}")
    sampler.reset()
    outcome = Runner(spec, paths, echo=lambda m: None, pool=pool).execute()
    if outcome.verdict != "exactly-once":
        raise RuntimeError(f"bench run of {rows} rows in {batches} batches: {outcome.verdict} ({outcome.error})")
    return {
        "rows": rows,
        "requested_batches": batches,
        # Predicted as the source admits them (the checkpoint keeps only the newest 100 batches, minBatchesToRetain,
        # and a query's recentProgress the newest 100).
        "batches": len(build_schedule(spec, get_scenario(SCENARIO)).predicted_batches),
        "run_s": _span_s(paths.history, "run"),
        "check_s": _span_s(paths.history, "check"),
        "peak_rss_mb": round(sampler.peak(), 1),
    }


def bare_run(spark: Any, work: Path, rows: int, batches: int) -> float:
    """Seconds for bare Spark to write ``rows`` rows in ``batches`` batches: ``rate-micro-batch`` -> parquet."""
    per = max(1, math.ceil(rows / batches))
    t0 = time.perf_counter()
    query = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", per)
        .load()
        .writeStream.format("parquet")
        .option("path", str(work / f"bare-{rows}-{batches}"))
        .option("checkpointLocation", str(work / f"bare-{rows}-{batches}.ckpt"))
        .trigger(processingTime="0 seconds")
        .start()
    )
    try:
        while query.isActive and _batch_id(query.lastProgress) < batches - 1:
            time.sleep(0.01)
    finally:
        query.stop()
    return time.perf_counter() - t0


def _batch_id(progress: Any) -> int:
    """The batch id of a ``lastProgress`` (a dict, or PySpark 4's ``StreamingQueryProgress``); -1 before one."""
    if progress is None:
        return -1
    return int(progress["batchId"] if isinstance(progress, dict) else progress.batchId)


def _slope(cells: list[dict[str, Any]], key: str) -> float:
    first, last = cells[0], cells[-1]
    decades = math.log10(last["rows"] / first["rows"])
    return math.log10(last[key] / first[key]) / decades if decades and first[key] > 0 else 0.0


def volume_growth(
    work: Path,
    sampler_factory: Callable[[], Any],
    rows: tuple[int, ...] = ROWS,
    batches: tuple[int, ...] = BATCHES,
    echo: Callable[[str], None] = print,
) -> dict[str, Any]:
    """The table (``cells``) and the slopes of ``run_s`` and ``check_s`` (see the module docstring).
    ``sampler_factory()`` gives a started sampler with ``reset()``, ``peak()`` and ``stop()``."""
    from harness.spark.session import DEFAULT_MASTER, build_session

    cells: list[dict[str, Any]] = []
    sampler = sampler_factory()
    pool = DriverPool(work / "pool-logs", DEFAULT_MASTER, {})
    try:
        harness_run(pool, work / "warm-up", 100, 2, sampler)  # the driver's JVM and Python workers start here
        for n in rows:
            for b in batches:
                cell = harness_run(pool, work, n, b, sampler)
                echo(
                    f"  {n:>9,} rows, {cell['batches']:>3} batches: "
                    f"run {cell['run_s']:.1f} s, check {cell['check_s']:.1f} s"
                )
                cells.append(cell)
    finally:
        pool.close()
        sampler.stop()
    spark = build_session("harness-bench-volume")
    spark.sparkContext.setLogLevel("FATAL")  # stopping a bare query mid-batch logs an abort that is expected here
    try:
        bare_run(spark, work, 100, 2)  # warm-up
        for cell in cells:
            cell["bare_s"] = bare_run(spark, work, cell["rows"], cell["batches"])
            cell["run_ratio"] = cell["run_s"] / cell["bare_s"]
    finally:
        spark.stop()
    middle = batches[len(batches) // 2]
    at_middle = [c for c in cells if c["requested_batches"] == middle] or cells
    largest = max(cells, key=lambda c: (c["rows"], c["batches"]))
    return {
        "cells": cells,
        "run_slope": _slope(at_middle, "run_s"),
        "check_slope": _slope(at_middle, "check_s"),
        "largest": {k: largest[k] for k in ("rows", "batches", "run_s", "check_s", "peak_rss_mb", "run_ratio")},
    }
