"""Drawing one run's timeline as inline SVG (lanes: drivers, data, batches, kills, anomalies).

One column per micro-batch, in batch order. See :mod:`harness.conformance.certify.html` for what
each lane shows; every text element is a ``text.lbl`` with a ``data-lane``,
which the page's layout check uses to find labels that overlap or leave the picture.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from fault_injectors.actions import DEFAULT
from fault_injectors.plan import CRASH_POINTS
from fault_injectors.points import after_commit
from harness.timeline.story import BatchBox, Timeline

COL_W, LEFT, TOP = 160, 92, 10
BOX_Y, BOX_H = TOP + 76, 84
CHAR_PX = 6.3  # average width of an 11px sans-serif character
DRIVER_COLORS = ("#1565c0", "#6a1b9a", "#00838f", "#ad1457", "#4e342e", "#283593")


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _fit(text: str, width_px: float) -> str:
    n = max(4, int(width_px / CHAR_PX))
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def _label(x: float, y: float, text: str, lane: str, width: float, **attrs: Any) -> str:
    extra = " ".join(f'{k.replace("_", "-")}="{esc(v)}"' for k, v in attrs.items())
    return f'<text class="lbl" data-lane="{lane}" x="{x:.1f}" y="{y:.1f}" {extra}>{esc(_fit(text, width))}</text>'


def _box_style(b: BatchBox) -> tuple[str, str]:
    if b.anomalies:
        return "#ffebe9", "#cf222e"
    if b.committed_ns is None:
        return "#eaeef2", "#8c959f"
    if b.replayed:
        return "#fff1d6", "#bc4c00"
    return "#e6f4ea", "#2e7d32"


def _kill_x(point: str, column: int) -> float:
    """Where in its batch's column a crash point sits: left = planning, right = after the commit log."""
    order = list(CRASH_POINTS)
    frac = order.index(point) / (len(order) - 1) if point in order else 0.5
    return LEFT + column * COL_W + 16 + frac * (COL_W - 32)


def timeline_svg(tl: Timeline, svg_id: str) -> str:
    """One timeline as an inline ``<svg>`` (see the module docstring for the lanes)."""
    batches = tl.batches
    cols = max(1, len(batches) + (1 if tl.failures else 0))
    width, height = LEFT + cols * COL_W + 12, BOX_Y + BOX_H + 82
    col = {b.batch_id: i for i, b in enumerate(batches)}
    out = [
        f'<svg class="timeline" id="{esc(svg_id)}" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-size="11" role="img" aria-label="{esc(tl.title)}">'
    ]
    lanes = (
        (TOP + 24, "drivers"),
        (TOP + 58, "data"),
        (BOX_Y + 46, "batches"),
        (BOX_Y + BOX_H + 30, "kills"),
        (BOX_Y + BOX_H + 62, "anomalies"),
    )
    for y, name in lanes:
        out.append(f'<text x="6" y="{y}" fill="#57606a" font-weight="600">{name}</text>')
    out += _driver_lane(tl, col, cols)
    out += _data_lane(tl, batches)
    for i, b in enumerate(batches):
        out += _batch(b, LEFT + i * COL_W, tl.t0_ns, svg_id)
    out += _kill_lane(tl, col)
    if tl.failures:
        out += _failure(tl, LEFT + len(batches) * COL_W)
    out.append("</svg>")
    return "".join(out)


def batch_anchor(svg_id: str, batch_id: int) -> str:
    """The element id of batch ``batch_id``'s box in the picture ``svg_id`` (a page links anomalies to it)."""
    return f"{svg_id}-batch-{batch_id}"


def _failure(tl: Timeline, x: float) -> list[str]:
    f = tl.failures[-1]
    inner = COL_W - 28
    out = [
        f'<rect x="{x + 8}" y="{BOX_Y}" width="{COL_W - 16}" height="{BOX_H}" rx="6" fill="#ffebe9" '
        f'stroke="#cf222e" stroke-dasharray="4 3"><title>{esc(f["message"])}</title></rect>',
        _label(x + 14, BOX_Y + 16, f"{f['driver']} failed", "batches", inner, font_weight="700", fill="#a40e26"),
    ]
    for k, part in enumerate(_wrap(str(f["message"]), int(inner / CHAR_PX), 4)):
        out.append(_label(x + 14, BOX_Y + 32 + 13 * k, part, f"fail{k}", inner, fill="#a40e26"))
    return out


def _wrap(text: str, width: int, lines: int) -> list[str]:
    out, cur = [], ""
    for w in text.split():
        if len(cur) + len(w) + 1 > width and cur:
            out.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    out.append(cur)
    if len(out) > lines:
        out = [*out[: lines - 1], out[lines - 1] + " \u2026"]
    return out


def _driver_lane(tl: Timeline, col: Mapping[int, int], cols: int) -> list[str]:
    """One bar per driver incarnation over the batches it ran, on two alternating rows so a
    killed driver and the one replacing it can share the column where the kill happened."""
    out: list[str] = []
    prev_end = LEFT + 4.0
    for n, d in enumerate(tl.drivers):
        x0: float
        committed = [col[b.batch_id] for b in tl.batches if b.committed_by == d.name]
        kills = [k for k in tl.kills if k["driver"] == d.name and k["batch"] in col]
        if d.ended == "failed" and tl.failures and not committed:
            x0 = LEFT + (cols - 1) * COL_W + 8
        elif committed:
            x0 = max(prev_end - 40, LEFT + min(committed) * COL_W + 8)
        else:
            x0 = max(LEFT + 8, prev_end - 40)
        if kills:
            x_end = _kill_x(kills[-1]["point"], col[kills[-1]["batch"]])
        elif committed:
            x_end = LEFT + (max(committed) + 1) * COL_W - 8
        else:
            x_end = LEFT + cols * COL_W - 8 if d.ended == "failed" else x0 + 96
        x1 = max(x_end, x0 + 112)
        prev_end = x_end
        y = TOP + 4 + 20 * (n % 2)
        color = DRIVER_COLORS[n % len(DRIVER_COLORS)]
        how = "already running (shared pool)" if d.reused else f"the run waited {d.startup_s:.1f} s for it"
        tip = f"{d.name}: {how}; {d.ended}"
        out.append(
            f'<rect x="{x0:.1f}" y="{y}" width="{x1 - x0:.1f}" height="16" rx="4" fill="{color}" opacity="0.9">'
            f"<title>{esc(tip)}</title></rect>"
        )
        text = d.name if d.reused else f"{d.name} ({d.startup_s:.0f}s)"
        dead = d.ended in ("killed", "failed")
        out.append(
            _label(
                x0 + 5, y + 12, text, f"drivers{n % 2}", x1 - x0 - (22 if dead else 8), fill="#fff", font_weight="600"
            )
        )
        if dead:
            out.append(
                f'<text x="{x1 - 14:.1f}" y="{y + 13}" fill="#fff" font-weight="700" font-size="13">\u2715</text>'
            )
    return out


def _data_lane(tl: Timeline, batches: Sequence[BatchBox]) -> list[str]:
    out: list[str] = []
    per_col: dict[int, int] = {}
    for d in tl.data:
        i = next((k for k, b in enumerate(batches) if (b.planned_ns or 0) >= d["time_ns"]), len(batches))
        stack = per_col.get(i, 0)
        per_col[i] = stack + 1
        x, y = LEFT + i * COL_W + 8, TOP + 56 + 12 * stack
        out.append(f'<path d="M{x} {y - 8} l6 4 l-6 4 z" fill="#0969da"/>')
        out.append(_label(x + 9, y, d["label"], f"data{stack}", COL_W - 22, fill="#0969da", font_size="10"))
    return out


def _batch(b: BatchBox, x: float, t0: int, svg_id: str) -> list[str]:
    fill, stroke = _box_style(b)
    w, inner = COL_W - 16, COL_W - 28
    tip = f"batch {b.batch_id}: {b.start} -> {b.end}"
    if b.replayed:
        tip += f"; hit by a kill at {', '.join(b.kills)} and replayed"
    out = [
        f'<rect id="{esc(batch_anchor(svg_id, b.batch_id))}" x="{x + 8}" y="{BOX_Y}" width="{w}" height="{BOX_H}" '
        f'rx="6" fill="{fill}" stroke="{stroke}" '
        f'stroke-width="1.6"><title>{esc(tip)}</title></rect>',
        _label(x + 14, BOX_Y + 16, f"batch {b.batch_id}", "batches", inner, font_weight="700", fill=stroke),
        _label(x + 14, BOX_Y + 31, f"from {b.start if b.start != '-' else 'start'}", "b-from", inner),
        _label(x + 14, BOX_Y + 45, f"to {b.end}", "b-to", inner),
    ]
    when = f"t+{(b.committed_ns - t0) / 1e9:.1f}s" if b.committed_ns else "not committed"
    out.append(_label(x + 14, BOX_Y + 61, when, "b-when", inner, fill="#57606a"))
    if b.committed_by:
        state = "replayed by " if b.replayed else "by "
        out.append(_label(x + 14, BOX_Y + 75, state + b.committed_by, "b-by", inner, fill="#57606a"))
    if b.anomalies:
        text = ", ".join(f"{n} {k}" for k, n in sorted(b.anomalies.items()))
        y = BOX_Y + BOX_H + 48
        out.append(f'<rect x="{x + 8}" y="{y}" width="{w}" height="18" rx="9" fill="#cf222e"/>')
        out.append(_label(x + 14, y + 13, text, "anomalies", inner, fill="#fff", font_weight="700"))
    return out


def _kill_lane(tl: Timeline, col: Mapping[int, int]) -> list[str]:
    """A red notch on the batch box where each fault fired (by crash point), a cross under it, the point's name."""
    out: list[str] = []
    stacked: dict[int, int] = {}
    for k in tl.kills:
        if k["batch"] not in col:
            continue
        i = col[k["batch"]]
        x = _kill_x(k["point"], i)
        out.append(
            f'<path d="M{x - 5:.1f} {BOX_Y - 2} l5 7 l5 -7 z" fill="#cf222e"/>'
            f'<line x1="{x:.1f}" y1="{BOX_Y + BOX_H}" x2="{x:.1f}" y2="{BOX_Y + BOX_H + 10}" stroke="#cf222e" '
            f'stroke-width="2"/><text x="{x - 5:.1f}" y="{BOX_Y + BOX_H + 22}" fill="#cf222e" font-weight="700" '
            f'font-size="13">\u2715</text>'
        )
        n = stacked.get(i, 0)
        stacked[i] = n + 1
        verb = "" if k["action"] == DEFAULT else f"{k['action']} @ "
        late = " (late)" if k.get("commit_logged") and not after_commit(k["point"]) else ""
        out.append(
            _label(
                LEFT + i * COL_W + 10,
                BOX_Y + BOX_H + 36 + 12 * n,
                f"{verb}{k['point']}{late}",
                f"kill{n}",
                COL_W - 14,
                fill="#cf222e",
                font_size="10",
            )
        )
    return out
