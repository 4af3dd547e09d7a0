"""Where sink.step faults are reported outside a run: certify's step choice and the bench table's step rows
(pure logic; the census that certify takes is replaced by a fixed one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fault_injectors.steps import CallCensus
from harness.bench.render import render_bench
from harness.chaos.census import Census
from harness.conformance.certify import runs as certify_runs
from harness.conformance.certify.command import ROWS


def _census(scenario: str, seed: int, **_: Any) -> Census:
    calls = {
        ("foreach_batch", b, None): CallCensus(
            "foreach_batch",
            b,
            None,
            0,
            tuple(f"sink.py:{10 + k} upsert -> sqlite3.Connection.execute" for k in range(b + 3)),
            True,
        )
        for b in range(5)
    }
    return Census(scenario, seed, calls)


def test_certify_aims_one_step_kill_per_batch_after_the_named_points(monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.chaos.census

    monkeypatch.setattr(harness.chaos.census, "take_census", _census)
    row = next(r for r in ROWS if r.key == "sink:foreachBatch-idempotent")
    assert row.steps == 2 and len(row.kill_points) == 2
    rules, tried = certify_runs._step_rules(row, 7, 3, Path("/nonexistent/run"), pool=None)
    assert [r.point for r in rules] == ["sink.step", "sink.step"]
    assert [r.batch for r in rules] == [2, 3], "step kills come after the named points' batches 0 and 1"
    for rule, line in zip(rules, tried, strict=True):
        assert rule.action == "kill_process_group" and rule.wrapper == "foreach_batch"
        assert rule.step is not None and 1 <= rule.step <= rule.batch + 3  # batch b has b + 3 steps
        assert (
            line == f"batch {rule.batch} foreach_batch step {rule.step}: sink.py:{9 + rule.step} upsert -> "
            "sqlite3.Connection.execute"
        )
    assert certify_runs._step_rules(row, 7, 3, Path("/x"), pool=None)[0] == rules, "seeded: the same steps again"
    assert all(r.steps == 0 for r in ROWS if r.kind == "source" or r.scenario in ("file_sink_stateless",))


def test_bench_table_shows_only_the_sections_measured() -> None:
    timing = {"min": 0.1, "median": 0.2, "max": 0.3, "n": 3}
    doc = {
        "steps": {"bare": timing, "wrapped": timing, "traced": {**timing, "median": 0.5}},
        "step_tracing_overhead_ratio": 1.02,
        "step_census_overhead_ratio": 2.5,
        "peak_rss_mb": 900.0,
    }
    text = render_bench(doc)
    assert "step_tracing_overhead_ratio            1.02x" in text and "target <= 1.1x" in text
    assert "step_census_overhead_ratio             2.50x" in text
    assert "overhead_ratio    " not in text.replace("step_tracing_overhead_ratio", "").replace(
        "step_census_overhead_ratio", ""
    ), "the steady section was not measured"
    assert "kill -> recovered" not in text and "chaos examples/min" not in text and "inspector" not in text


def test_bench_volume_table_rows_and_slopes() -> None:
    cell = {"rows": 1_000_000, "requested_batches": 200, "batches": 200, "run_s": 60.0, "check_s": 5.9}
    doc = {
        "volume": {"cells": [{**cell, "peak_rss_mb": 2048.4, "bare_s": 30.0, "run_ratio": 2.0}]},
        "volume_run_slope": 0.05,
        "volume_check_slope": 0.4,
        "peak_rss_mb": 2100.0,
    }
    text = render_bench(doc)
    assert "1,000,000      200   60.0      5.9    2048M     2.00x" in text, text
    assert "volume slopes per 10x rows             run 0.05, check 0.40 (1.0 = linear)" in text


def test_bench_kafka_rows_or_why_they_were_skipped() -> None:
    timing = {"min": 2.0, "median": 2.1, "max": 2.2, "n": 3}
    kafka = {
        "rows": 20_000,
        "broker_start_s": {**timing, "median": 5.3},
        "harness_run_s": {**timing, "median": 4.7},
        "harness_query_s": timing,
        "bare_s": {**timing, "median": 2.0},
        "pipeline_ratio": 1.05,
        "run_ratio": 2.35,
        "chaos": {"examples": 3, "hard_kills": 3, "minutes": 1.2, "per_minute": 2.5},
    }
    text = render_bench({"kafka": kafka, "peak_rss_mb": 3000.0})
    assert "Kafka broker start                     5.30 s (min 2.00, max 2.20, n=3)" in text, text
    assert "kafka_pipeline_ratio                   1.05x (the query; target <= 1.1x)" in text
    assert "kafka_run_ratio                        2.35x" in text and "Kafka -> parquet (20,000 rows), run" in text
    assert "chaos examples/min, kafka_file_sink    2.50 (3 ci examples, 3 hard kills, pooled)" in text
    skipped = render_bench({"kafka": {"skipped": "jars missing: run harness setup"}, "peak_rss_mb": 1.0})
    assert "Kafka                                  skipped: jars missing: run harness setup" in skipped


def test_bench_check_sink_rows() -> None:
    doc = {
        "sinkcheck": {
            "mixed": {"seconds": 99.4, "exit_code": 0, "step_kills": 36},
            "hard": {"seconds": 276.2, "exit_code": 0, "step_kills": 36},
            "bare_batch_s": 0.052,
        },
        "check_sink_python_kill_speedup": 2.78,
        "check_sink_kill_ratio": 53.1,
        "peak_rss_mb": 900.0,
    }
    text = render_bench(doc)
    assert "check-sink --steps all, SQLite upsert   99.4 s (36 step kills of the Python alone" in text
    assert "276.2 s (check_sink_python_kill_speedup 2.78x)" in text
    assert "check_sink_kill_ratio                   53.1x a bare batch of the same function (0.052 s)" in text
    assert "chaos examples/min" not in render_bench({"peak_rss_mb": 1.0})
