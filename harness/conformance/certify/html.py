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

from harness.timeline.page import CHECK_SCRIPT, CSS, LEGEND
from harness.timeline.story import Timeline
from harness.timeline.svg import esc, timeline_svg

STATUS_STYLE = {
    "agrees": ("agrees", "ok"),
    "stronger": ("stronger than documented", "soft"),
    "contradicts": ("CONTRADICTS documentation", "bad"),
    "not measured": ("not measured", "none"),
}


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
