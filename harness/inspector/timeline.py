"""The timeline view: one row per batch the checkpoint knows about."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.inspector.load import CheckpointModel


@dataclass(frozen=True)
class SourceSpan:
    """One source's range in a batch: ``start`` is the previous batch's end
    (``None`` for the first batch or when the previous batch is unknown)."""

    source: str
    start: Any
    end: Any
    #: False when the previous batch's offsets are purged or unreadable.
    start_known: bool = True


@dataclass(frozen=True)
class StateCell:
    """How many of an operator's stores hold the version this batch writes (``batch_id + 1``)."""

    operator_id: int
    version: int
    stores_with_version: int
    stores: int


@dataclass(frozen=True)
class TimelineRow:
    batch_id: int
    #: ``offsets/N`` exists (readable or not) / ``commits/N`` exists.
    planned: bool
    committed: bool
    #: ``"committed"``, ``"planned"`` (no commit), ``"unreadable"`` (offsets/N cannot be parsed)
    #: or ``"commit-only"`` (commits/N without offsets/N).
    status: str
    sources: tuple[SourceSpan, ...] = ()
    watermark_ms: int | None = None
    timestamp_ms: int | None = None
    next_watermark_ms: int | None = None
    state: tuple[StateCell, ...] = ()
    #: Files the sink log records as added by this batch (``None``: no sink given / not recorded).
    sink_files_added: int | None = None


def build_timeline(m: CheckpointModel) -> list[TimelineRow]:
    """Rows for every batch id in ``offsets/`` or ``commits/``, in id order."""
    planned, committed = set(m.offset_ids), set(m.commit_ids)
    rows: list[TimelineRow] = []
    for bid in sorted(planned | committed):
        entry = m.offsets.get(bid)
        commit = m.commits.get(bid)
        if bid not in planned:
            status = "commit-only"
        elif entry is None:
            status = "unreadable"
        else:
            status = "committed" if bid in committed else "planned"
        spans: list[SourceSpan] = []
        if entry is not None:
            prev = m.offsets.get(bid - 1)
            before = dict(zip(prev.source_keys(), prev.sources, strict=False)) if prev else {}
            known = prev is not None or bid == 0
            for key, end in zip(entry.source_keys(), entry.sources, strict=False):
                spans.append(SourceSpan(key, before.get(key), end, known))
        cells = tuple(
            StateCell(op.operator_id, bid + 1, op.stores_with_version(bid + 1), len(op.stores)) for op in m.state
        )
        sink_added = None
        if m.sink is not None:
            sink_added = m.sink.log.added_by(bid)
        rows.append(
            TimelineRow(
                batch_id=bid,
                planned=bid in planned,
                committed=bid in committed,
                status=status,
                sources=tuple(spans),
                watermark_ms=entry.watermark_ms if entry else None,
                timestamp_ms=entry.timestamp_ms if entry else None,
                next_watermark_ms=commit.next_watermark_ms if commit else None,
                state=cells,
                sink_files_added=sink_added,
            )
        )
    return rows


def offset_text(value: Any) -> str:
    """Compact one-line text of an offset: ``-`` for none, JSON without spaces otherwise."""
    if value is None:
        return "-"
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def span_text(span: SourceSpan) -> str:
    start = offset_text(span.start) if span.start_known else "?"
    return f"{span.source}: {start} -> {offset_text(span.end)}"
