"""Bench section ``kafka``: the harness on a Kafka -> parquet pipeline against bare Spark, the broker's start and
chaos examples per minute on a Kafka scenario, all in the same bench run.

Per repetition a throw-away broker is started (:func:`scenarios.kafka.resource.shared_broker`; its start is
``broker_start_s``: storage format, JVM start, until an admin client lists topics), then:

- **harness**: a fault-free run of ``kafka_file_sink`` (Spark's Kafka source -> map/filter -> parquet file sink)
  with :data:`ROWS` rows in one round, on a warmed driver (no JVM start in the figures). From its history:
  ``run_s``, the ``run`` command (the driver produces the round's records to the run's topic, builds and starts
  the query, the query runs until caught up), and ``query_s``, from the listener's ``query_started`` to the end of
  that command (the query alone, as the harness drives it: checkpoint watcher, progress listener, driver
  protocol);
- **bare**: a plain SparkSession in this process (Spark's Kafka connector on its ``spark.jars``, nothing of the
  harness installed) runs the same query over the same topic contents: ``readStream.format("kafka")``
  (``subscribe`` the harness run's topic, ``startingOffsets`` earliest) -> the same JSON parsing and transform ->
  parquet, ``trigger(availableNow=True)``; ``bare_s`` is from ``start()`` until it terminated.

``pipeline_ratio = query_s / bare_s`` (target <= 1.1x) and ``run_ratio = run_s / bare_s`` (producing the topic
included, which a bare pipeline does not do). Medians over the repetitions, with min and max.

Chaos: :data:`CHAOS_EXAMPLES` schedules a ``ci`` campaign of ``kafka_file_sink`` generates (its soft faults and
SIGKILLs), run on the new design (one driver pool with a warm standby) against one broker: examples per minute.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.bench.chaos import campaign_specs, chaos_rate
from harness.engine.history import read_history
from harness.engine.pool import DriverPool
from harness.engine.rundir import RunPaths
from harness.engine.runner import Runner
from harness.engine.spec import RunSpec
from scenarios import get_scenario

SCENARIO = "kafka_file_sink"
#: Rows of the measured run (one round, one batch: the scenario sets no ``maxOffsetsPerTrigger``).
ROWS = 20_000
CHAOS_EXAMPLES = 3


def _stat(xs: list[float]) -> dict[str, float]:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def harness_run(pool: DriverPool, run_dir: Path, rows: int) -> dict[str, Any]:
    """A fault-free run of ``rows`` rows in one round; its ``run_s``, ``query_s`` and topic."""
    spec = RunSpec(SCENARIO, 1, kills=0, rounds=1, volume=rows)
    paths = RunPaths(run_dir)
    outcome = Runner(spec, paths, echo=lambda m: None, pool=pool).execute()
    if outcome.verdict != "exactly-once":
        raise RuntimeError(f"bench run of {SCENARIO} ({rows} rows): {outcome.verdict} ({outcome.error})")
    events = read_history(paths.history)
    invoke = next(e.time_ns for e in events if e.f == "run" and e.type == "invoke")
    started = next(e.time_ns for e in events if e.f == "query_started" and e.time_ns >= invoke)
    done = next(e.time_ns for e in events if e.f == "run" and e.type == "ok" and e.time_ns >= started)
    topic = json.loads(paths.resources.read_text())["topic"]
    return {"run_s": (done - invoke) / 1e9, "query_s": (done - started) / 1e9, "topic": topic}


def bare_run(spark: Any, bootstrap: str, topic: str, out: Path) -> float:
    """Seconds from ``start()`` until the bare query over ``topic`` terminated (see the module docstring)."""
    from pyspark.sql import functions as F

    from scenarios.kafka.source import KafkaTopic

    sc = get_scenario(SCENARIO)
    assert isinstance(sc.source, KafkaTopic)
    ddl = sc.source.ddl
    raw = (
        spark.readStream.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
    )
    parsed = raw.select(F.from_json(F.col("value").cast("string"), ddl).alias("r")).select("r.*")
    writer = (
        sc.transform(parsed)
        .writeStream.format("parquet")
        .option("path", str(out / "data"))
        .option("checkpointLocation", str(out / "checkpoint"))
        .trigger(availableNow=True)
    )
    t0 = time.perf_counter()
    query = writer.start()
    query.awaitTermination()
    elapsed = time.perf_counter() - t0
    if query.exception() is not None:
        raise RuntimeError(f"bare Kafka query failed: {query.exception()}")
    return elapsed


def kafka_unavailable() -> str | None:
    """Why no Kafka run can start here (the set-up's jar cache), else ``None``."""
    from scenarios.base import ResourceUnavailable
    from scenarios.kafka.preflight import preflight

    try:
        preflight()
    except ResourceUnavailable as exc:
        return str(exc)
    return None


def kafka_bench(work: Path, reps: int, echo: Callable[[str], None] = print) -> dict[str, Any]:
    """The figures of the module docstring; ``reps`` brokers, harness runs and bare runs, interleaved."""
    from harness.spark.session import DEFAULT_MASTER, build_session
    from scenarios.kafka.resource import shared_broker

    starts, runs, queries, bares = [], [], [], []
    spark = build_session("harness-bench-kafka")
    spark.sparkContext.setLogLevel("FATAL")
    pool = DriverPool(work / "kafka-pool", DEFAULT_MASTER, {})
    try:
        for rep in range(reps):
            t0 = time.monotonic()
            with shared_broker(work / f"kafka-broker-{rep}") as bootstrap:
                starts.append(time.monotonic() - t0)
                if rep == 0:  # warm-up: the driver's and this session's first Kafka query
                    warm = harness_run(pool, work / "kafka-warm", 200)
                    bare_run(spark, bootstrap, warm["topic"], work / "kafka-warm-bare")
                got = harness_run(pool, work / f"kafka-run-{rep}", ROWS)
                bare = bare_run(spark, bootstrap, got["topic"], work / f"kafka-bare-{rep}")
            runs.append(got["run_s"])
            queries.append(got["query_s"])
            bares.append(bare)
            echo(
                f"  broker start {starts[-1]:.1f} s; harness run {got['run_s']:.2f} s (query {got['query_s']:.2f} s), "
                f"bare {bare:.2f} s"
            )
    finally:
        pool.close()
        spark.stop()
    out: dict[str, Any] = {
        "rows": ROWS,
        "broker_start_s": _stat(starts),
        "harness_run_s": _stat(runs),
        "harness_query_s": _stat(queries),
        "bare_s": _stat(bares),
    }
    out["pipeline_ratio"] = statistics.median(queries) / statistics.median(bares)
    out["run_ratio"] = statistics.median(runs) / statistics.median(bares)
    with shared_broker(work / "kafka-broker-chaos"):
        specs = campaign_specs(SCENARIO, CHAOS_EXAMPLES)
        out["chaos"] = chaos_rate(work, "campaign_kafka_file_sink", specs, "pooled")
    return out
