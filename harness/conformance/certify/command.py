"""``python -m harness certify``: the guarantee each built-in source and sink *actually*
shows under real SIGKILLs, next to the guarantee the documentation states.

Every row is one real run with kill/restart (nothing is looked up or assumed):
sinks through the harness runner (replayable source -> the sink, one kill per
listed crash point, point *i* in batch *i*); sources through the end-to-end
source runs (the source -> the exactly-once parquet file sink, with data also
arriving while a driver is down), or, for Spark's Kafka source, through the
runner on the ``kafka_file_sink`` scenario (the harness fills a topic). Every
Kafka row (``source:kafka``, ``sink:kafka``) runs against one throw-away broker
started for the certify run and stopped at its end. The Delta rows (:mod:`.delta`:
Spark's Delta sink, ``foreachBatch`` appends and MERGEs with and without txn ids,
delta-rs) are sink rows that need the set-up's Delta jar set (skipped with its
problem otherwise). The documented guarantee is data with its
citation (:mod:`.documented`). Status per row: ``agrees``; ``stronger`` (the
measurement satisfies the documented guarantee and is stronger: these faults
did not expose the documented weakness); ``contradicts`` (the measurement
violates the documented guarantee); ``not measured`` (no verdict). Every
status but ``agrees`` is flagged.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.conformance.certify.delta import DELTA_ROWS
from harness.conformance.certify.documented import DOCUMENTED, REPLAYABLE
from harness.conformance.certify.dstreams import DSTREAM_ROWS
from harness.conformance.certify.runs import (
    Row,
    kafka_missing,
    measure_sink,
    measure_source,
    measure_source_scenario,
)
from harness.conformance.certify.triggers import TRIGGER_ROWS
from harness.conformance.guarantees import satisfies
from harness.timeline.story import Timeline, anomaly_counts, build_timeline

SOURCE_KILLS = ("after_offsets_logged", "after_commit_logged")


def _postgres_missing() -> str | None:
    from scenarios.sinks.pg_cluster import unavailable_reason

    return unavailable_reason()


CS = "harness.conformance.certify.scenarios"
ROWS: tuple[Row, ...] = (
    Row("source:rate", "source", "rate", SOURCE_KILLS, source="rate"),
    Row("source:rate-micro-batch", "source", "rate-micro-batch", SOURCE_KILLS, source="rate-micro-batch"),
    Row("source:file", "source", "file source (json)", SOURCE_KILLS, source="file"),
    Row(
        "source:kafka",
        "source",
        "Kafka source",
        SOURCE_KILLS,
        "kafka_file_sink",
        needs=kafka_missing,
        kafka=True,
    ),
    Row("sink:file", "sink", "file sink (parquet)", ("sink.write.mid", "sink.commit.after"), "file_sink_stateless"),
    Row(
        "sink:foreachBatch-naive",
        "sink",
        "foreachBatch, appending (no batch-id dedup)",
        ("sink.write.mid", "sink.commit.after"),
        "foreachbatch_append_naive",
        steps=2,
    ),
    Row(
        "sink:foreachBatch-idempotent",
        "sink",
        "foreachBatch, idempotent by batch id (upsert_into_sqlite)",
        ("sink.write.mid", "sink.commit.after"),
        "foreachbatch_sqlite_upsert",
        steps=2,
    ),
    Row(
        "sink:foreach",
        "sink",
        "foreach (naive ForeachWriter)",
        ("after_offsets_logged", "sink.commit.after"),
        f"{CS}:FOREACH",
    ),
    Row("sink:memory", "sink", "memory sink", ("after_offsets_logged",), f"{CS}:MEMORY"),
    Row("sink:console", "sink", "console sink", ("after_offsets_logged", "sink.commit.after"), f"{CS}:CONSOLE"),
    Row(
        "sink:kafka",
        "sink",
        "Kafka sink",
        ("sink.write.mid", "sink.commit.after"),
        "kafka_sink",
        needs=kafka_missing,
        kafka=True,
    ),
    Row(
        "reference:transactional-files",
        "reference",
        "TransactionalFileSink (Python sink)",
        ("sink.write.mid", "sink.commit.after"),
        "python_sink_transactional",
        steps=2,
    ),
    Row(
        "reference:publish-in-write",
        "reference",
        "PublishInWriteSink (Python sink)",
        ("sink.write.mid", "sink.commit.after"),
        "python_sink_publish_in_write",
        steps=2,
    ),
    Row(
        "reference:postgres-upsert",
        "reference",
        "foreachBatch upsert_into_postgres",
        ("sink.write.mid", "sink.commit.after"),
        "foreachbatch_postgres_upsert",
        needs=_postgres_missing,
        steps=2,
    ),
    *DELTA_ROWS,
    *TRIGGER_ROWS,
    *DSTREAM_ROWS,
)
ROW_KEYS = tuple(r.key for r in ROWS)


def status_of(documented: str, measured: str | None) -> str:
    if measured is None:
        return "not measured"
    if documented == REPLAYABLE:
        return "agrees" if measured == REPLAYABLE else "contradicts"
    if measured == documented:
        return "agrees"
    return "stronger" if satisfies(measured, documented) else "contradicts"


def run_certify(
    only: Sequence[str] | None,
    workdir: Path,
    *,
    seed: int = 1,
    keep: bool = False,
    echo: Callable[[str], None] = print,
) -> tuple[list[dict[str, Any]], dict[str, Timeline]]:
    """Measure every row (or those in ``only``); returns table rows and timelines by row key."""
    from harness.engine.pool import DriverPool
    from harness.spark.session import DEFAULT_MASTER

    rows = [r for r in ROWS if only is None or r.key in only]
    table: list[dict[str, Any]] = []
    timelines: dict[str, Timeline] = {}
    # One driver pool for every row, with a ready standby: a row starts on the previous row's driver and a
    # killed driver is replaced by one whose SparkSession is up. Not a warm one: a row's kills come 1-3 s into
    # a driver's life, before a standby's warm-up (~11 s on 2 cores) could end, so each kill waited for it
    # (four rows: 111 s ready against 136 s warm, same verdicts). Each kill is still a SIGKILL.
    pool = DriverPool(workdir / "drivers", DEFAULT_MASTER, {}, standby="ready")
    try:
        with contextlib.ExitStack() as shared:
            if any(r.kafka and not (r.needs and r.needs()) for r in rows):
                _share_kafka_broker(shared, workdir, echo)
            for row in rows:
                table.append(_measure_row(row, workdir, seed, keep, pool, timelines, echo))
    finally:
        pool.close()
    return table, timelines


def _share_kafka_broker(stack: contextlib.ExitStack, workdir: Path, echo: Callable[[str], None]) -> None:
    """Start one broker for every Kafka row, stopped when ``stack`` closes. If it cannot start, each Kafka
    run tries a broker of its own and its row says why that failed too."""
    from scenarios.base import ResourceUnavailable
    from scenarios.kafka.resource import shared_broker

    t0 = time.monotonic()
    try:
        bootstrap = stack.enter_context(shared_broker(workdir / "kafka"))
    except ResourceUnavailable as exc:
        echo(f"certify: no shared Kafka broker ({exc})")
        return
    echo(f"certify: one Kafka broker for the Kafka rows at {bootstrap} ({time.monotonic() - t0:.1f} s to start)")


def _measure_row(
    row: Row,
    workdir: Path,
    seed: int,
    keep: bool,
    pool: Any,
    timelines: dict[str, Timeline],
    echo: Callable[[str], None],
) -> dict[str, Any]:
    """Measure one row; its timeline goes into ``timelines``; its run directory is removed unless ``keep``."""
    doc = DOCUMENTED[row.key]
    t0 = time.monotonic()
    reason = row.needs() if row.needs else None
    run_dir = workdir / row.key.replace(":", "-")
    if reason:
        got: dict[str, Any] = {"measured": None, "error": f"skipped: {reason}", "anomalies": [], "kills": 0}
    else:
        echo(f"certify {row.key}: {len(row.kill_points)} kill(s) at {', '.join(row.kill_points)}")
        try:
            if row.kind != "source":
                got = measure_sink(row, run_dir, seed, pool, echo)
            elif row.source is not None:
                got = measure_source(row, run_dir, pool, echo)
            else:
                got = measure_source_scenario(row, run_dir, seed, pool, echo)
        except Exception as exc:  # a harness bug must cost this row its measurement, not the whole table
            got = {
                "measured": None,
                "error": f"the harness failed: {type(exc).__name__}: {exc}",
                "anomalies": [],
                "kills": 0,
            }
    status = status_of(doc.level, got["measured"])
    evidence = got.get("note") or got.get("error") or ""
    if got.get("kill_points"):
        evidence = f"{got['kills']} kill(s) ({', '.join(got['kill_points'])}); {evidence}"
    if got.get("steps_tried"):
        evidence += f"; kills after steps of the sink's code: {'; '.join(got['steps_tried'])}"
    out = {
        "key": row.key,
        "kind": row.kind,
        "name": row.name,
        "documented": doc.level,
        "quote": doc.quote,
        "where": doc.where,
        "measured": got["measured"] or "not measured",
        "status": status,
        "evidence": evidence,
        "error": got.get("error"),
        "kills": got["kills"],
        "steps_tried": got.get("steps_tried", []),
        "duration_s": time.monotonic() - t0,
    }
    if run_dir.exists():
        counts = anomaly_counts(got["anomalies"])
        timelines[row.key] = build_timeline(run_dir, row.name, got.get("verdict", "unknown"), counts)
        if not keep:
            shutil.rmtree(run_dir, ignore_errors=True)
            shutil.rmtree(run_dir.parent / f"{run_dir.name}-data", ignore_errors=True)
            shutil.rmtree(run_dir.parent / f"{run_dir.name}-census", ignore_errors=True)
    echo(f"certify {row.key}: measured {out['measured']}, documented {doc.level} -> {status}")
    return out


def render_table(rows: Sequence[dict[str, Any]], total_s: float) -> str:
    flags = [r for r in rows if r["status"] != "agrees"]
    head = (
        f"certify: {len(rows)} row(s) in {total_s:.0f} s; "
        f"{sum(r['status'] == 'agrees' for r in rows)} agree with the documentation, {len(flags)} flagged"
    )
    widths = (10, 44, 14, 15, 26)
    lines = [
        head,
        "  "
        + "  ".join(
            h.ljust(w)
            for h, w in zip(("kind", "source / sink", "documented", "measured", "status"), widths, strict=True)
        ),
    ]
    for r in rows:
        flag = "" if r["status"] == "agrees" else "FLAG "
        cells = (r["kind"], r["name"], r["documented"], r["measured"], flag + r["status"])
        lines.append("  " + "  ".join(str(c)[:w].ljust(w) for c, w in zip(cells, widths, strict=True)))
    lines.append("evidence:")
    lines += [f"  {r['key']}: {r['evidence']}" for r in rows]
    cited = sorted({w.split(" > ")[0].split(" (")[0] for r in rows for w in r["where"].split("; ")})
    lines.append("documented: " + "; ".join(cited))
    return "\n".join(lines)


def exit_code(rows: Sequence[dict[str, Any]]) -> int:
    """0 every row measured and none contradicts its documentation; 1 a contradiction; 2 a row not measured."""
    if any(r["status"] == "contradicts" for r in rows):
        return 1
    return 2 if any(r["status"] == "not measured" and not str(r["error"]).startswith("skipped") for r in rows) else 0
