"""Human text and machine JSON for an :class:`InspectionReport`.

Text: the headline first, then where things are, the state and sink summaries,
the timeline as an aligned table (the newest ``limit`` rows), the Delta table's
batches (``--delta``, also capped by ``limit``), then violations and notes, at most
``MAX_PER_ID`` per invariant id ("and N more"). JSON carries everything, uncapped.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from harness.inspector.delta_log import DeltaBatchRow, DeltaReport
from harness.inspector.findings import Finding
from harness.inspector.inspection import InspectionReport
from harness.inspector.timeline import TimelineRow, span_text

MAX_PER_ID = 8
MAX_CELL = 90


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], max_cell: int = MAX_CELL) -> list[str]:
    """Left-aligned columns separated by two spaces; cells longer than ``max_cell`` end in ``…``."""
    cut = [[c if len(c) <= max_cell else c[: max_cell - 1] + "…" for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cut]) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*headers).rstrip()] + [fmt.format(*r).rstrip() for r in cut]


def iso_ms(ms: int | None) -> str:
    """``2026-11-22T14:31:10.123Z`` for epoch milliseconds (``-`` for none/0)."""
    if not ms:
        return "-"
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


#: Column headers of the timeline table (:func:`timeline_cells`).
TIMELINE_HEADERS = ("batch", "status", "sources (start -> end)", "watermark", "timestamp", "state", "sink")


def timeline_cells(r: TimelineRow) -> list[str]:
    """One timeline row as text cells, in :data:`TIMELINE_HEADERS` order."""
    state = " ".join(f"op{c.operator_id}:v{c.version} {c.stores_with_version}/{c.stores}" for c in r.state)
    return [
        str(r.batch_id),
        r.status,
        "; ".join(span_text(s) for s in r.sources) or "-",
        str(r.watermark_ms) if r.watermark_ms is not None else "-",
        iso_ms(r.timestamp_ms),
        state or "-",
        f"+{r.sink_files_added}" if r.sink_files_added is not None else "-",
    ]


def findings_text(findings: Sequence[Finding], title: str) -> list[str]:
    if not findings:
        return []
    lines = [f"{title} ({len(findings)}):"]
    count: dict[str, int] = {}
    for f in findings:
        count[f.id] = count.get(f.id, 0) + 1
        if count[f.id] <= MAX_PER_ID:
            lines.append("  " + f.line())
    lines += [f"  ... and {n - MAX_PER_ID} more [{fid}] (see --json)" for fid, n in count.items() if n > MAX_PER_ID]
    return lines


def render_text(report: InspectionReport, limit: int = 50) -> str:
    """The human report; ``limit`` timeline rows (the newest), 0 for all."""
    m = report.model
    lines = [report.headline(), f"checkpoint: {m.root}"]
    if m.sink is not None:
        live = len(m.sink.log.live_entries())
        lines.append(f"file sink: {m.sink.directory} ({len(m.sink.log.ids)} log batch(es), {live} live file(s))")
    for op in m.state:
        versions = sorted({v for s in op.stores for v in s.versions})
        span = f"versions {versions[0]}..{versions[-1]}" if versions else "no versions"
        lines.append(
            f"state: operator {op.operator_id} ({op.name or 'unknown'}): {len(op.partition_ids)} partition(s), "
            f"{len(op.stores)} store(s), {span}"
        )
    cs = m.checksums
    lines.append(f"checksums: {len(cs.results)} verified, {len(cs.mismatches)} mismatched")
    rows = report.timeline if limit <= 0 else report.timeline[-limit:]
    if rows:
        hidden = len(report.timeline) - len(rows)
        lines.append(
            f"timeline ({len(rows)} of {len(report.timeline)} batches"
            + (", newest last):" if not hidden else f"; {hidden} older hidden, --limit 0 shows all):")
        )
        lines += ["  " + ln for ln in table(list(TIMELINE_HEADERS), [timeline_cells(r) for r in rows])]
    if report.delta is not None:
        lines += delta_text(report.delta, limit)
    lines += findings_text(report.violations, "violations")
    lines += findings_text(report.notes, "notes")
    return "\n".join(lines)


#: Column headers of the Delta section (:func:`delta_cells`).
DELTA_HEADERS = ("batch", "checkpoint", "delta version(s)")


def delta_cells(r: DeltaBatchRow) -> list[str]:
    """One batch of the Delta section: ``-`` = no txn for it, ``?`` = no txn and not checked."""
    status = "committed" if r.committed else "planned" if r.planned else "not planned"
    versions = ", ".join(map(str, r.delta_versions)) or ("-" if r.checked else "?")
    return [str(r.batch_id), status, versions]


def delta_text(d: DeltaReport, limit: int = 50) -> list[str]:
    """The "delta table" section: where the table's history starts and, per batch, its Delta version(s)."""
    if d.error is not None:
        return [f"delta table: {d.table}: log unreadable (see delta-log-corrupt below)"]
    source = "--txn-app-id" if d.app_id_given else "the checkpoint's query id"
    app = f"txn app id {d.app_id} ({source})" if d.app_id is not None else "no txn app id (pass --txn-app-id)"
    lines = [f"delta table: {d.table} (Delta versions {d.first_version}..{d.last_version}; {app})"]
    if d.checkpoint_version is not None:
        lines.append(f"  history starts at Delta checkpoint {d.checkpoint_version} (older commits were cleaned up)")
    rows = d.rows if limit <= 0 else d.rows[-limit:]
    if rows:
        hidden = len(d.rows) - len(rows)
        more = ", newest last):" if not hidden else f"; {hidden} older hidden, --limit 0 shows all):"
        lines.append(f"delta batches ({len(rows)} of {len(d.rows)}{more}")
        lines += ["  " + ln for ln in table(list(DELTA_HEADERS), [delta_cells(r) for r in rows])]
    return lines


def delta_json(d: DeltaReport) -> dict[str, Any]:
    """The Delta section as plain JSON (findings are in the report's ``findings``)."""
    return {
        "table": str(d.table),
        "app_id": d.app_id,
        "app_id_source": "--txn-app-id" if d.app_id_given else "checkpoint metadata",
        "first_version": d.first_version,
        "last_version": d.last_version,
        "checkpoint_version": d.checkpoint_version,
        "other_app_ids": list(d.other_app_ids),
        "error": d.error,
        "batches": [
            {
                "batch_id": r.batch_id,
                "planned": r.planned,
                "committed": r.committed,
                "delta_versions": list(r.delta_versions),
                "checked": r.checked,
            }
            for r in d.rows
        ],
    }


def _finding_json(f: Finding) -> dict[str, Any]:
    return {"id": f.id, "severity": f.severity, "path": f.path, "message": f.message, "batch_id": f.batch_id}


def _row_json(r: TimelineRow) -> dict[str, Any]:
    return {
        "batch_id": r.batch_id,
        "status": r.status,
        "planned": r.planned,
        "committed": r.committed,
        "sources": [
            {"source": s.source, "start": s.start, "end": s.end, "start_known": s.start_known} for s in r.sources
        ],
        "watermark_ms": r.watermark_ms,
        "timestamp_ms": r.timestamp_ms,
        "next_watermark_ms": r.next_watermark_ms,
        "state": [
            {
                "operator_id": c.operator_id,
                "version": c.version,
                "stores_with_version": c.stores_with_version,
                "stores": c.stores,
            }
            for c in r.state
        ],
        "sink_files_added": r.sink_files_added,
    }


def report_json(report: InspectionReport) -> dict[str, Any]:
    """Everything the inspector knows, as plain JSON-serializable data."""
    m = report.model
    latest = m.offsets[max(m.offsets)] if m.offsets else None
    sink = None
    if m.sink is not None:
        sink = {
            "directory": str(m.sink.directory),
            "log_batches": m.sink.log.ids,
            "latest_compact": m.sink.log.latest_compact,
            "live_files": sorted(str(e.get("path")) for e in m.sink.log.live_entries()),
            "data_files": [str(p) for p in m.sink.files],
        }
    return {
        "checkpoint": str(m.root),
        "sink_dir": str(m.sink_dir) if m.sink_dir else None,
        "query_id": m.query_id,
        "ok": report.ok,
        "exit_code": report.exit_code,
        "headline": report.headline(),
        "offsets_batches": m.offset_ids,
        "commit_batches": m.commit_ids,
        "conf": latest.conf if latest else {},
        "batches": [_row_json(r) for r in report.timeline],
        "state": [
            {
                "operator_id": op.operator_id,
                "name": op.name,
                "num_partitions": op.num_partitions,
                "partitions": op.partition_ids,
                "stores": [
                    {
                        "partition_id": s.partition_id,
                        "store_name": s.store_name,
                        "versions": s.versions,
                        "files": [f"{f.version}.{f.kind}" for f in s.files],
                    }
                    for s in op.stores
                ],
            }
            for op in m.state
        ],
        "source_logs": {k: log.ids for k, log in m.sources.items()},
        "sink": sink,
        "checksums": {
            "verified": len(m.checksums.results),
            "mismatches": [str(r.main) for r in m.checksums.mismatches],
            "orphans": [str(p) for p in m.checksums.orphans],
            "temp_files": [str(p) for p in m.checksums.temp_files],
        },
        "findings": [_finding_json(f) for f in report.findings],
        "delta": delta_json(report.delta) if report.delta is not None else None,
    }
