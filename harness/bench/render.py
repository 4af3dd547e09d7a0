"""The table ``python -m harness bench`` prints from its JSON document (:mod:`harness.bench.suite`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.bench.chaos import CAMPAIGN_LABELS, DESIGNS, WORST_LABELS

__all__ = ["render_bench"]


def render_bench(doc: dict[str, Any]) -> str:
    """The printed table; sections a ``bench --only`` run left out are left out here too."""

    def s(d: dict[str, float]) -> str:
        return f"{d['median']:.2f} s (min {d['min']:.2f}, max {d['max']:.2f}, n={d['n']})"

    lines = ["harness bench (medians; every ratio is against bare Spark or a cold design measured in this run)"]
    if "steady" in doc:
        st = doc["steady"]
        lines += [
            f"  batch, rate-micro-batch -> noop        {s(st['rate_noop'])}",
            f"  batch, minimal Python source -> noop   {s(st['floor_noop'])}",
            f"  batch, replayable -> noop              {s(st['replayable_noop'])}",
            f"  batch, replayable -> parquet file sink {s(st['replayable_file'])}",
            f"  overhead_ratio                         {doc['overhead_ratio']:.2f}x (target <= 1.2x)",
            f"  python_source_floor_ratio              {doc['python_source_floor_ratio']:.2f}x (any Python source; "
            "the floor of overhead_ratio)",
            f"  replayable_vs_floor_ratio              {doc['replayable_vs_floor_ratio']:.2f}x (what the harness's "
            "source adds)",
            f"  harness_batch_ratio (with file sink)   {doc['harness_batch_ratio']:.2f}x",
            f"  batch, JSON file source -> noop        {s(st['file_source_noop'])}",
            f"  file_source_overhead_ratio             {doc['file_source_overhead_ratio']:.2f}x (harness-published "
            "files; target <= 1.2x)",
        ]
    if "steps" in doc:
        sp = doc["steps"]
        lines += [
            f"  batch, rate -> foreachBatch SQLite     {s(sp['bare'])}",
            f"  ... in the crash-injecting wrapper     {s(sp['wrapped'])}",
            f"  ... traced step by step (census)       {s(sp['traced'])}",
            f"  step_tracing_overhead_ratio            {doc['step_tracing_overhead_ratio']:.2f}x (no fault planned for "
            "the call; target <= 1.1x)",
            f"  step_census_overhead_ratio             {doc['step_census_overhead_ratio']:.2f}x (every call traced: a "
            "census, or the call a sink.step rule is armed for)",
        ]
    if "sinkcheck" in doc:
        sc = doc["sinkcheck"]
        mixed = sc["mixed"]
        lines += [
            f"  check-sink --steps all, SQLite upsert   {mixed['seconds']:.1f} s ({mixed['step_kills']} step kills "
            "of the Python alone; target <= 90 s)",
            f"  ... with whole-driver kills             {sc['hard']['seconds']:.1f} s "
            f"(check_sink_python_kill_speedup {doc['check_sink_python_kill_speedup']:.2f}x)",
            f"  check_sink_kill_ratio                   {doc['check_sink_kill_ratio']:.1f}x a bare batch of the "
            f"same function ({sc['bare_batch_s']:.3f} s) per step kill",
        ]
    if "check" in doc:
        for r in doc["check"]["sizes"]:
            python = f", whole-input Python {r['python_s']:.2f} s" if "python_s" in r else ""
            lines.append(f"  check, {r['rows']:>9,} rows            {r['arrow_s']:.2f} s (Arrow-narrowed{python})")
        lines.append(
            f"  check_slope                            {doc['check_slope']:.2f} (per 10x rows; 1.0 = linear; "
            "10^6-row target < 60 s)"
        )
    if "restart_cold" in doc:
        lines += [
            f"  kill -> recovered batch, cold          {s(doc['restart_cold']['kill_to_first_batch_s'])}",
            f"  kill -> recovered batch, cold, trimmed {s(doc['restart_cold_trimmed']['kill_to_first_batch_s'])}",
            f"  kill -> recovered batch, warm standby  {s(doc['restart_warm']['kill_to_first_batch_s'])}",
            f"  cold_restart_ratio                     {doc['cold_restart_ratio']:.1f}x one steady batch "
            f"(trimmed {doc['cold_trimmed_restart_ratio']:.1f}x)",
            f"  warm_restart_ratio                     {doc['warm_restart_ratio']:.1f}x one steady batch "
            "(target <= 5x)",
        ]
    if "examples_per_minute_ratio" in doc:
        for label in (*CAMPAIGN_LABELS, *WORST_LABELS):
            runs = {d: doc[f"chaos_{label}_{d}"] for d in DESIGNS if f"chaos_{label}_{d}" in doc}
            rates = ", ".join(f"{d} {r['per_minute']:.2f}" for d, r in runs.items())
            p = runs["pooled"]
            counts = f"({p['examples']} examples, {p['hard_kills']} hard kills)"
            lines.append(f"  chaos examples/min, {label:<30} {rates} {counts}")
        lines += [
            f"  examples_per_minute_ratio              {doc['examples_per_minute_ratio']:.2f}x (ci campaign mix, "
            "over cold; target >= 3x)",
            f"  ... pooling only (over cold_trimmed)   {doc['examples_per_minute_ratio_pooling_only']:.2f}x",
            f"  ... worst case (a kill every example)  {doc['examples_per_minute_ratio_worst_case']:.2f}x",
        ]
    if "volume" in doc:
        lines.append("  whole runs (file_sink_stateless, no faults): rows  batches  run s  check s  peak RSS  run/bare")
        for c in doc["volume"]["cells"]:
            lines.append(
                f"    {c['rows']:>9,} {c['batches']:>8} {c['run_s']:>6.1f} {c['check_s']:>8.1f} "
                f"{c['peak_rss_mb']:>7.0f}M {c['run_ratio']:>8.2f}x"
            )
        lines.append(
            f"  volume slopes per 10x rows             run {doc['volume_run_slope']:.2f}, check "
            f"{doc['volume_check_slope']:.2f} (1.0 = linear)"
        )
    lines += _kafka_lines(doc, s)
    lines.append(f"  peak RSS of the process tree           {doc['peak_rss_mb']:.0f} MiB")
    if "inspector_1000_s" in doc:
        lines.append(f"  inspector, 1,000-batch checkpoint      {s(doc['inspector_1000_s'])}")
    return "\n".join(lines)


def _kafka_lines(doc: dict[str, Any], s: Callable[[dict[str, float]], str]) -> list[str]:
    """The Kafka section's rows (:mod:`harness.bench.kafka`), or why it was skipped."""
    k = doc.get("kafka")
    if k is None:
        return []
    if "skipped" in k:
        return [f"  {'Kafka':<39}skipped: {k['skipped']}"]
    chaos = k["chaos"]
    rows = [
        ("Kafka broker start", s(k["broker_start_s"])),
        (f"Kafka -> parquet ({k['rows']:,} rows), run", f"{s(k['harness_run_s'])} (producing the topic included)"),
        ("... the query, as the harness runs it", s(k["harness_query_s"])),
        ("... the same query on bare Spark", s(k["bare_s"])),
        ("kafka_pipeline_ratio", f"{k['pipeline_ratio']:.2f}x (the query; target <= 1.1x)"),
        ("kafka_run_ratio", f"{k['run_ratio']:.2f}x (the whole run, producing included)"),
        (
            "chaos examples/min, kafka_file_sink",
            f"{chaos['per_minute']:.2f} ({chaos['examples']} ci examples, {chaos['hard_kills']} hard kills, pooled)",
        ),
    ]
    return [f"  {label:<39}{value}" for label, value in rows]
