"""``python -m harness bench``: the harness's costs as ratios to bare Spark,
all measured in the same run on the same machine.

- ``overhead_ratio``: median batch time of replayable source -> ``noop`` over
  ``rate-micro-batch`` -> ``noop`` (same rows per batch, same session);
  ``python_source_floor_ratio`` is the same for the cheapest Python data source
  yielding the same rows (:mod:`harness.bench.floor`): no Python source can do
  better, and ``replayable_vs_floor_ratio`` is what the harness's source adds;
  ``harness_batch_ratio`` does the same with the parquet file sink (the
  reference exactly-once sink) behind the replayable source.
- "cold" is the cold-restart design as it was before the new design's
  start-up trims (no class-data archive, :mod:`harness.spark.cds`; pyspark imported
  from Spark's zip, ``harness/spark/sitepath``); "cold_trimmed" is the same with the
  trims, so pooling and trims can be read apart.
- ``cold_restart_ratio`` / ``cold_trimmed_restart_ratio`` /
  ``warm_restart_ratio``: time from a SIGKILL of the driver to the first
  recovered batch, over one steady batch of the same driver.
- ``examples_per_minute_ratio``: chaos examples per minute of the new design
  (one driver shared by all examples, warm standby, soft faults in place,
  start-up trims) over the cold design (a new driver per example and per hard
  kill), the same schedules in both: those a ``ci`` campaign generates (its
  mix of soft faults and hard kills). ``..._pooling_only`` is over
  "cold_trimmed". ``..._worst_case`` uses schedules with a hard kill in every
  example (every hard kill is a JVM start in every design).
- ``step_tracing_overhead_ratio`` / ``step_census_overhead_ratio``: a
  ``foreachBatch`` SQLite upsert inside the crash-injecting wrapper, untraced
  (no fault planned for the call) and traced step by step, over the bare
  function (:mod:`harness.bench.steps`).
- ``file_source_overhead_ratio``: Spark's JSON file source over files the harness
  published (a file-directory scenario's input) -> ``noop``, over ``rate-micro-batch``
  -> ``noop``, same rows per batch, same session.
- ``check_slope``: how the verdict's time grows per 10x rows, 10^3 .. 10^6
  (:mod:`harness.bench.check`; 1.0 = linear), and ``check_1e6_s``;
- ``volume_run_slope`` / ``volume_check_slope``: whole runs of 10^3 .. 10^6 rows in 10, 50 and 200 batches, their
  run and check times, peak RSS and ratio to bare Spark writing the same rows in as many batches
  (:mod:`harness.bench.volume`);
- ``kafka_pipeline_ratio`` / ``kafka_run_ratio``: a fault-free ``kafka_file_sink`` run (Spark's Kafka source
  -> parquet) over the same query on bare Spark reading the same topic, the query alone and the whole run
  (producing the topic included); ``kafka_broker_start_s`` and ``kafka_chaos_examples_per_minute`` (a small
  ``ci`` campaign of ``kafka_file_sink``) (:mod:`harness.bench.kafka`);
- ``check_sink_s``, ``check_sink_python_kill_speedup``, ``check_sink_kill_ratio``: ``check-sink --steps all`` of
  the reference SQLite upsert, as users run it, with the default and with whole-driver kills
  (:mod:`harness.bench.sinkcheck`);
- peak RSS of the whole process tree; the inspector's time on a 1,000-batch
  checkpoint.

Medians of repeated runs with min and max. No targets are asserted here: the
figures are printed so runs can be compared over time.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fault_injectors.plan import FaultRule
from harness.bench.chaos import CAMPAIGN_LABELS, DESIGNS, WORST_LABELS, chaos_rate, chaos_workloads, startup
from harness.bench.check import check_growth
from harness.bench.files import file_source_batch
from harness.bench.floor import FORMAT as FLOOR_FORMAT
from harness.bench.floor import FloorDataSource
from harness.bench.memory import MemorySampler
from harness.bench.render import render_bench  # noqa: F401  (re-exported: the CLI imports it from here)
from harness.bench.steps import batch_durations, step_tracing
from harness.engine.history import read_history
from harness.engine.pool import DriverPool
from harness.engine.rundir import RunPaths
from harness.engine.runner import Runner
from harness.engine.spec import RunSpec
from harness.spark.procs import TOKEN_PREFIX_ENV, new_token


def stat(xs: list[float]) -> dict[str, float]:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def steady_batches(work: Path, rows: int, batches: int, reps: int) -> dict[str, Any]:
    """Median trigger time per batch of three pipelines, interleaved ``reps`` times in one session."""
    from harness.spark.session import build_session
    from scenarios.replayable_source import FORMAT
    from scenarios.tap import advance, init_tap

    spark = build_session("harness-bench")
    spark.sparkContext.setLogLevel("FATAL")  # stopping a query mid-batch logs an abort that is expected here
    spark.dataSource.register(FloorDataSource)
    results: dict[str, list[float]] = {
        "rate_noop": [],
        "floor_noop": [],
        "replayable_noop": [],
        "replayable_file": [],
        "file_source_noop": [],
    }

    durations = batch_durations
    try:
        for rep in range(reps):
            d = work / f"steady-{rep}"
            q = (
                spark.readStream.format("rate-micro-batch")
                .option("rowsPerBatch", rows)
                .load()
                .writeStream.format("noop")
                .option("checkpointLocation", str(d / "c0"))
                .start()
            )
            results["rate_noop"].append(statistics.median(durations(q, batches + 2)))
            floor = spark.readStream.format(FLOOR_FORMAT).option("rows_per_batch", rows).load()
            q = floor.writeStream.format("noop").option("checkpointLocation", str(d / "c-floor")).start()
            results["floor_noop"].append(statistics.median(durations(q, batches + 2)))
            for name, sink in (("replayable_noop", "noop"), ("replayable_file", "parquet")):
                tap = d / f"{name}.tap"
                init_tap(tap, 2)
                advance(tap, {0: rows * (batches + 2) // 2, 1: rows * (batches + 2) // 2})
                stream = (
                    spark.readStream.format(FORMAT).options(seed="1", tap=str(tap), max_rows_per_batch=str(rows)).load()
                )
                w = stream.writeStream.format(sink).option("checkpointLocation", str(d / f"c-{name}"))
                if sink == "parquet":
                    w = w.option("path", str(d / f"out-{name}"))
                q = w.start()
                results[name].append(statistics.median(durations(q, batches + 2)))
            results["file_source_noop"].append(file_source_batch(spark, d / "files", rows, batches + 2, durations))
    finally:
        spark.stop()
    out: dict[str, Any] = {k: stat(v) for k, v in results.items()}  # figures per design, then ratios
    bare = out["rate_noop"]["median"]
    out["overhead_ratio"] = out["replayable_noop"]["median"] / bare
    out["harness_batch_ratio"] = out["replayable_file"]["median"] / bare
    out["python_source_floor_ratio"] = out["floor_noop"]["median"] / bare
    out["replayable_vs_floor_ratio"] = out["replayable_noop"]["median"] / out["floor_noop"]["median"]
    out["file_source_overhead_ratio"] = out["file_source_noop"]["median"] / bare
    return out


def _kill_to_recovery(history: Path) -> tuple[float, float]:
    """(seconds from the first kill to the next completed batch, median steady batch seconds before it)."""
    events = read_history(history)
    kill = next(e for e in events if e.f == "kill")
    after = next(e for e in events if e.f == "batch" and e.time_ns > kill.time_ns and e.value.get("rows"))
    steady = [
        e.value["duration_ms"] / 1000.0
        for e in events
        if e.f == "batch" and e.time_ns < kill.time_ns and e.value.get("rows") and e.value.get("duration_ms")
    ]
    return (after.time_ns - kill.time_ns) / 1e9, statistics.median(steady[1:] or steady)


def restarts(work: Path, label: str, standby: bool, reps: int) -> dict[str, Any]:
    """Kill the driver at batch 3 of a 5-batch stateless run; time to the first recovered batch.
    ``label`` names the run directories (each measurement needs its own)."""
    gaps, steadies = [], []
    for rep in range(reps):
        spec = RunSpec(
            "file_sink_stateless",
            rep,
            kills=0,
            rows=((100, 100),),
            extra_faults=(FaultRule("b", "after_offsets_logged", 3),),
        )
        paths = RunPaths(work / f"restart-{label}-{rep}")
        with DriverPool(paths.logs, spec.master, {}, standby=standby) as pool:
            pool.start()
            pool.wait_for_standby()
            outcome = Runner(spec, paths, echo=lambda m: None, pool=pool).execute()
        if outcome.error:
            raise RuntimeError(f"restart benchmark run failed: {outcome.error}")
        gap, steady = _kill_to_recovery(paths.history)
        gaps.append(gap)
        steadies.append(steady)
    return {
        "kill_to_first_batch_s": stat(gaps),
        "steady_batch_s": stat(steadies),
        "ratio": statistics.median(gaps) / statistics.median(steadies),
    }


def inspector_1000(work: Path) -> dict[str, Any]:
    from harness.inspector import inspect_checkpoint
    from harness.inspector.synth import synth_checkpoint

    ck = synth_checkpoint(work / "ck1000", 1000, stateful=True, sink_dir=work / "out1000", watermark_step_ms=1000)
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        inspect_checkpoint(ck, work / "out1000")
        times.append(time.perf_counter() - t0)
    return stat(times)


#: Sections of ``bench --only``.
SECTIONS = ("steady", "restarts", "chaos", "inspector", "steps", "check", "volume", "kafka", "sinkcheck")


def _kafka_section(doc: dict[str, Any], work: Path, reps: int, echo: Callable[[str], None]) -> None:
    """``doc["kafka"]`` and its top-level figures; a note instead when Kafka cannot run here."""
    from harness.bench.kafka import kafka_bench, kafka_unavailable

    reason = kafka_unavailable()
    if reason is not None:
        echo(f"Kafka: skipped ({reason})")
        doc["kafka"] = {"skipped": reason}
        return
    echo("Kafka -> parquet: harness vs bare Spark, broker start, chaos examples/min ...")
    doc["kafka"] = k = kafka_bench(work, reps, echo)
    doc["kafka_pipeline_ratio"], doc["kafka_run_ratio"] = k["pipeline_ratio"], k["run_ratio"]
    doc["kafka_broker_start_s"] = k["broker_start_s"]["median"]
    doc["kafka_chaos_examples_per_minute"] = k["chaos"]["per_minute"]


def run_bench(
    quick: bool = False, echo: Callable[[str], None] = print, only: tuple[str, ...] = SECTIONS
) -> dict[str, Any]:
    """Run the measurements of the ``only`` sections (default all); returns the JSON document (ratios at
    the top level)."""
    reps = 2 if quick else 3
    prefix = f"bench-{new_token()[:8]}-"
    os.environ[TOKEN_PREFIX_ENV] = prefix
    sampler = MemorySampler(prefix)
    sampler.start()
    doc: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as tmp:
        work = Path(tmp)
        if "steady" in only:
            echo("steady batches (rate-micro-batch vs replayable, 200 rows/batch) ...")
            doc["steady"] = steady_batches(work, rows=200, batches=6 if quick else 10, reps=reps)
        if "steps" in only:
            echo("step tracing (foreachBatch SQLite upsert: bare, wrapped, traced; 200 rows/batch) ...")
            doc["steps"] = step_tracing(work, rows=200, batches=6 if quick else 10, reps=reps)
        for label, standby, trimmed in (("cold", False, False), ("cold_trimmed", False, True), ("warm", True, True)):
            if "restarts" in only:
                echo(f"kill -> first recovered batch, {label} ...")
                with startup(trimmed):
                    doc[f"restart_{label}"] = restarts(work, label, standby, reps)
        for label, specs in chaos_workloads(quick) if "chaos" in only else ():
            for design in DESIGNS if label in CAMPAIGN_LABELS else DESIGNS[:2]:
                echo(f"chaos examples/min, {label}, {design} design ...")
                doc[f"chaos_{label}_{design}"] = chaos_rate(work, label, specs, design)
        if "inspector" in only:
            echo("inspector on a 1,000-batch checkpoint ...")
            doc["inspector_1000_s"] = inspector_1000(work)
        if "check" in only:
            echo("the verdict's cost, rows 10^3 .. 10^6 ...")
            doc["check"] = check_growth()
            doc["check_slope"], doc["check_1e6_s"] = doc["check"]["check_slope"], doc["check"]["check_1e6_s"]
        if "volume" in only:
            echo("whole runs as data and batches grow (rows 10^3 .. 10^6, 10/50/200 batches) ...")
            from harness.bench.volume import ROWS, volume_growth

            def new_sampler() -> MemorySampler:
                started = MemorySampler(prefix)
                started.start()
                return started

            doc["volume"] = vol = volume_growth(work, new_sampler, rows=ROWS[:3] if quick else ROWS, echo=echo)
            doc["volume_run_slope"], doc["volume_check_slope"] = vol["run_slope"], vol["check_slope"]
        if "kafka" in only:
            _kafka_section(doc, work, reps, echo)
        if "sinkcheck" in only:
            from harness.bench.sinkcheck import BATCH_ROWS, sink_check

            echo("check-sink of the reference SQLite upsert, every boundary: mixed and hard faults ...")
            bare = step_tracing(work, rows=BATCH_ROWS, batches=6, reps=1)["bare"]["median"]
            doc["sinkcheck"] = sink_check(work, bare)
            for key in ("check_sink_python_kill_speedup", "check_sink_kill_ratio"):
                doc[key] = doc["sinkcheck"][key]
            doc["check_sink_s"] = doc["sinkcheck"]["mixed"]["seconds"]
    doc["peak_rss_mb"] = round(sampler.stop(), 1)
    if "steady" in doc:
        for key in (
            "overhead_ratio",
            "harness_batch_ratio",
            "python_source_floor_ratio",
            "replayable_vs_floor_ratio",
            "file_source_overhead_ratio",
        ):
            doc[key] = doc["steady"][key]
    if "steps" in doc:
        doc["step_tracing_overhead_ratio"] = doc["steps"]["step_tracing_overhead_ratio"]
        doc["step_census_overhead_ratio"] = doc["steps"]["step_census_overhead_ratio"]
    if "restarts" in only:
        doc["cold_restart_ratio"] = doc["restart_cold"]["ratio"]
        doc["warm_restart_ratio"] = doc["restart_warm"]["ratio"]
        doc["cold_trimmed_restart_ratio"] = doc["restart_cold_trimmed"]["ratio"]
    if "chaos" not in only:
        return doc

    def ratio(label: str, baseline: str = "cold") -> float:
        return float(doc[f"chaos_{label}_pooled"]["per_minute"] / doc[f"chaos_{label}_{baseline}"]["per_minute"])

    doc["examples_per_minute_ratio"] = statistics.median(ratio(label) for label in CAMPAIGN_LABELS)
    doc["examples_per_minute_ratio_pooling_only"] = statistics.median(
        ratio(label, "cold_trimmed") for label in CAMPAIGN_LABELS
    )
    doc["examples_per_minute_ratio_worst_case"] = statistics.median(ratio(label) for label in WORST_LABELS)
    return doc
