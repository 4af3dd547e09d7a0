"""One page per run: the timeline picture of a run directory (drivers, data, batches with their offsets, kills,
anomalies), its anomalies' rows each linked to the batch that holds them, and the replay command.

Self-contained HTML (inline CSS and SVG, no network), the same renderer as ``certify``'s report: written by
``run --html``, ``replay --html``, into every chaos bundle (``timeline.html``), and by ``inspect --html`` for a
checkpoint alone. A small inline script checks
in the browser that no label leaves its picture or overlaps another in its lane and records the result in
``<body data-layout-check>``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.engine.outcome import RunOutcome
from harness.engine.report import boundary_label, summary_line, to_json
from harness.timeline.story import Timeline, build_timeline, checkpoint_timeline
from harness.timeline.svg import batch_anchor, esc, timeline_svg

#: Rows shown per anomaly kind (the report's cap).
MAX_ROWS = 8

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 4px}.meta{color:#57606a;font-size:13px}
table.summary{border-collapse:collapse;margin-top:14px;font-size:13px}
table.summary th,table.summary td{border:1px solid #d0d7de;padding:5px 9px;text-align:left;vertical-align:top}
table.summary th{background:#f6f8fa}.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600}
.ok{background:#dafbe1;color:#116329}.soft{background:#fff8c5;color:#7d4e00}.bad{background:#ffebe9;color:#a40e26}
.none{background:#eaeef2;color:#57606a}.cite{color:#57606a;font-size:11px}.run{margin-bottom:8px}
.scroll{overflow-x:auto;border:1px solid #d0d7de;border-radius:6px;padding:6px;background:#fcfcfd}
.legend{font-size:12px;color:#57606a;margin-top:6px}.legend span{margin-right:14px}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;vertical-align:-1px;margin-right:4px;border:1px solid}
.notes{font-size:12px;margin:6px 0 0 0;padding-left:18px}
"""
CHECK_SCRIPT = """
(function(){var bad=[];document.querySelectorAll('svg.timeline').forEach(function(svg){
var w=svg.viewBox.baseVal.width,lanes={};svg.querySelectorAll('text.lbl').forEach(function(t){
var b=t.getBBox();if(b.x<-1||b.x+b.width>w+1){bad.push(svg.id+': '+t.textContent+' leaves the picture')}
var k=t.getAttribute('data-lane');(lanes[k]=lanes[k]||[]).push([b,t.textContent])});
Object.keys(lanes).forEach(function(k){var l=lanes[k];for(var i=0;i<l.length;i++)for(var j=i+1;j<l.length;j++){
var a=l[i][0],c=l[j][0];if(a.x<c.x+c.width-1&&c.x<a.x+a.width-1&&a.y<c.y+c.height-1&&c.y<a.y+a.height-1)
bad.push(svg.id+': "'+l[i][1]+'" overlaps "'+l[j][1]+'"')}})});
document.body.setAttribute('data-layout-check',bad.length?bad.join(' | '):'ok')})();
"""


LEGEND = (
    '<div class="legend"><span><i class="sw" style="background:#e6f4ea;border-color:#2e7d32"></i>committed once</span>'
    '<span><i class="sw" style="background:#fff1d6;border-color:#bc4c00"></i>hit by a kill, replayed</span>'
    '<span><i class="sw" style="background:#ffebe9;border-color:#cf222e"></i>rows lost or duplicated</span>'
    '<span><i class="sw" style="background:#eaeef2;border-color:#8c959f"></i>never committed</span>'
    "<span>\u2715 / \u25bc = a SIGKILL of the driver at the named crash point, placed left (planning) to right "
    "(after the commit log); \u201clate\u201d = it landed after commits/N</span></div>"
)


def _anomaly_rows(anomalies: Sequence[Mapping[str, Any]], svg_id: str) -> str:
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for a in anomalies:
        by_kind.setdefault(str(a.get("kind")), []).append(a)
    parts = []
    for kind, rows in by_kind.items():
        items = []
        for a in rows[:MAX_ROWS]:
            batch = a.get("batch_id")
            where = (
                f'<a href="#{esc(batch_anchor(svg_id, batch))}">batch {esc(batch)}</a>'
                if isinstance(batch, int)
                else "no batch"
            )
            row = " ".join(f"{k}={v}" for k, v in (a.get("row") or {}).items())
            seen = f"seen {a.get('observed_count')}x, expected {a.get('expected_count')}x"
            items.append(f'<li class="anomaly {esc(kind)}">{where}: {esc(seen)}<br><code>{esc(row)}</code></li>')
        more = f"<li>... and {len(rows) - MAX_ROWS} more</li>" if len(rows) > MAX_ROWS else ""
        parts.append(f'<h2>{esc(kind)} ({len(rows)})</h2><ul class="notes">{"".join(items)}{more}</ul>')
    return "".join(parts)


def run_page(
    title: str,
    meta: str,
    timeline: Timeline,
    anomalies: Sequence[Mapping[str, Any]] = (),
    lines: Iterable[str] = (),
    extra_html: str = "",
) -> str:
    """The page of one run: ``meta`` under the title, the picture, ``anomalies`` (the JSON report's dicts) per
    kind with links to their batches, then ``lines`` (the faults fired, the replay command) as a list, then
    ``extra_html`` (already escaped)."""
    svg_id = "run"
    parts = [
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f'<style>{CSS}</style></head><body><h1>{esc(title)}</h1><div class="meta">{esc(meta)}</div>'
    ]
    if timeline.batches or timeline.failures:
        parts.append(f'<div class="scroll">{timeline_svg(timeline, svg_id)}</div>{LEGEND}')
    else:
        parts.append('<div class="meta">no timeline: the run left no checkpoint</div>')
    parts.append(_anomaly_rows(anomalies, svg_id))
    notes = [f"{n} {k} row(s) not traced to a batch" for k, n in timeline.unlocated.items()]
    notes += [f"{f['driver']} failed: {f['message']}" for f in timeline.failures]
    notes += list(lines)
    if notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    parts.append(extra_html)
    parts.append(f"<script>{CHECK_SCRIPT}</script></body></html>")
    return "".join(parts)


def write_run_page(
    path: str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    title: str,
    verdict: str,
    meta: str,
    anomalies: Sequence[Mapping[str, Any]] = (),
    lines: Iterable[str] = (),
) -> Path:
    """Build the timeline of the finished run in ``run_dir`` and write its page to ``path`` (parents made)."""
    timeline = build_timeline(run_dir, title, verdict, anomalies)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(run_page(title, meta, timeline, anomalies, lines), encoding="utf-8")
    return out


#: The page a chaos bundle holds beside ``bundle.json``.
BUNDLE_PAGE = "timeline.html"


def write_outcome_page(
    path: str | os.PathLike[str], outcome: RunOutcome, run_dir: str | os.PathLike[str] | None = None
) -> Path:
    """The page of a finished harness run (``run_dir``: where its history and checkpoint are; default the run's
    own directory, which must still exist): the report's summary line, the picture, the anomalies linked to their
    batches, the faults fired and the replay command."""
    doc = to_json(outcome)
    anomalies = [
        {**a, "count": abs(int(a.get("observed_count") or 0) - int(a.get("expected_count") or 0)) or 1}
        for a in doc["anomalies"]
    ]
    faults = [f"fault #{k['history_index']}: {k['description']}" + boundary_label(k) for k in outcome.kills_fired]
    title = f"{outcome.spec.scenario}, seed {outcome.spec.seed}"
    lines = [*faults, f"replay: {outcome.spec.replay_command()}"]
    return write_run_page(
        path, run_dir or outcome.paths.root, title, outcome.verdict, summary_line(outcome), anomalies, lines
    )


def write_checkpoint_page(
    path: str | os.PathLike[str], checkpoint: str | os.PathLike[str], sink_dir: str | os.PathLike[str] | None = None
) -> Path:
    """``inspect --html``: a checkpoint's batches drawn (offsets, commit times), then the inspector's timeline table
    (status, offsets, watermark, timestamp, state versions per operator, sink files) and its findings."""
    from harness.inspector import inspect_checkpoint
    from harness.inspector.render import TIMELINE_HEADERS, timeline_cells

    report = inspect_checkpoint(checkpoint, sink_dir)
    timeline = checkpoint_timeline(checkpoint, f"checkpoint {checkpoint}", report.headline())
    head = "".join(f"<th>{esc(h)}</th>" for h in TIMELINE_HEADERS)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in timeline_cells(r)) + "</tr>" for r in report.timeline)
    findings = [f.line() for f in (*report.violations, *report.notes)]
    table = f'<h2>batches</h2><table class="summary"><tr>{head}</tr>{body}</table>'
    page = run_page(f"checkpoint {checkpoint}", report.headline(), timeline, (), findings, extra_html=table)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    return out
