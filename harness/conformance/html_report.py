"""Self-contained HTML for certify: a summary table and one timeline picture per run.

No external assets, fonts or network: inline CSS and inline SVG. A timeline
has one column per micro-batch (in batch order) and lanes, top to bottom:
*drivers* (which driver incarnation committed which batches; a red cross where
one was killed, the JVM start time of each), *data* (rounds of input and data
that arrived while a driver was down), *batches* (offsets from -> to, commit
time since the run started; green = committed once, amber = hit by a kill and
replayed, red = has anomalies, grey = never committed), *kills* (the crash
point, placed on the batch where it fired, left to right in protocol order)
and *anomalies* (rows lost or duplicated, per batch). A small inline script
checks in the browser that no label leaves the picture or overlaps another in
its lane and records the result in ``<body data-layout-check>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.conformance.timeline import Timeline
from harness.conformance.timeline_svg import esc, timeline_svg

STATUS_STYLE = {
    "agrees": ("agrees", "ok"),
    "stronger": ("stronger than documented", "soft"),
    "contradicts": ("CONTRADICTS documentation", "bad"),
    "not measured": ("not measured", "none"),
}
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


def summary_table(rows: Sequence[Mapping[str, Any]]) -> str:
    head = "<tr><th>kind</th><th>source / sink</th><th>documented</th><th>measured</th><th>status</th><th>evidence</th>"
    out = ['<table class="summary">', head + "<th>time</th></tr>"]
    for r in rows:
        label, cls = STATUS_STYLE.get(r["status"], (r["status"], "none"))
        flag = "" if r["status"] == "agrees" else "\u2691 "
        out.append(
            f'<tr id="row-{esc(r["key"])}"><td>{esc(r["kind"])}</td><td><a href="#run-{esc(r["key"])}">'
            f'{esc(r["name"])}</a></td><td>{esc(r["documented"])}<div class="cite">{esc(r["quote"])} \u2014 '
            f"{esc(r['where'])}</div></td><td><b>{esc(r['measured'])}</b></td>"
            f'<td><span class="badge {cls}">{flag}{esc(label)}</span></td><td>{esc(r["evidence"])}</td>'
            f"<td>{r['duration_s']:.0f} s</td></tr>"
        )
    out.append("</table>")
    return "".join(out)


def render_html(title: str, meta: str, rows: Sequence[Mapping[str, Any]], timelines: Mapping[str, Timeline]) -> str:
    """The whole page: ``rows`` as in :func:`summary_table`; ``timelines`` by row key."""
    parts = [
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f'<style>{CSS}</style></head><body><h1>{esc(title)}</h1><div class="meta">{esc(meta)}</div>',
        summary_table(rows),
    ]
    for r in rows:
        tl = timelines.get(r["key"])
        parts.append(
            f'<section class="run" id="run-{esc(r["key"])}"><h2>{esc(r["name"])}: measured '
            f"{esc(r['measured'])}, documented {esc(r['documented'])}</h2>"
        )
        parts.append(f'<div class="meta">{esc(r["evidence"])}</div>')
        if tl is None or (not tl.batches and not tl.failures):
            parts.append(f'<div class="meta">no timeline: {esc(r.get("error") or "the run left no checkpoint")}</div>')
        else:
            parts.append(f'<div class="scroll">{timeline_svg(tl, "tl-" + r["key"].replace(":", "-"))}</div>{LEGEND}')
            notes = [f"{n} {k} row(s) not traced to a batch" for k, n in tl.unlocated.items()]
            notes += [f"{f['driver']} failed: {f['message']}" for f in tl.failures]
            if notes:
                parts.append('<ul class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
        parts.append("</section>")
    parts.append(f"<script>{CHECK_SCRIPT}</script></body></html>")
    return "".join(parts)
