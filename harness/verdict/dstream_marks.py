"""A DStream run's batches for the verdict: spans from the rounds' files, anomalies named by batch time and file.

The driver's ``check`` writes ``oracle/dstream_batches.json`` (:func:`harness.engine.dstream.write_batches`): per
round's batch its number, batch time (ms) and published files (``p<partition>-<start>-<end>.json``), and whether
the harness's observer saw it done. A DStream checkpoint has no offset log, so these are the batches the checker
locates rows in; every located anomaly then names its batch time and the input file that held its row.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.verdict.checker import Anomaly, BatchSpan
from scenarios.filedir import parse_name

#: The driver's file in the oracle directory (written by ``harness.engine.dstream.write_batches``).
DSTREAM_BATCHES = "dstream_batches.json"


def _parse(name: str) -> tuple[int, int, int]:
    parsed = parse_name(name)
    if parsed is None:
        raise ValueError(f"{DSTREAM_BATCHES}: {name!r} is not a published file's name")
    return parsed


def read_dstream(oracle: Path) -> list[dict[str, Any]] | None:
    """The run's DStream batches, or ``None`` for a run of another kind."""
    path = oracle / DSTREAM_BATCHES
    return list(json.loads(path.read_text())["batches"]) if path.exists() else None


def dstream_spans(batches: Sequence[dict[str, Any]]) -> list[BatchSpan]:
    """Per batch, ``[start, end)`` per partition from its files (a partition without a file: an empty range)."""
    ends: dict[int, int] = {}
    spans = []
    for b in batches:
        start = dict(ends)
        for name in b["files"]:
            p, lo, hi = _parse(name)
            start.setdefault(p, lo)
            ends[p] = hi
        spans.append(BatchSpan(int(b["batch"]), start, dict(ends), bool(b.get("done"))))
    return spans


def batch_time_text(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def name_dstream(anomalies: Sequence[Anomaly], batches: Sequence[dict[str, Any]]) -> list[Anomaly]:
    """Each located anomaly with ``sink_where`` naming its batch time and the input file of its row."""
    by_batch = {int(b["batch"]): b for b in batches}
    out = []
    for a in anomalies:
        b = by_batch.get(a.batch_id) if a.batch_id is not None else None
        if b is None:
            out.append(a)
            continue
        where = f"batch time {batch_time_text(int(b['time_ms']))} ({b['time_ms']})"
        files = [f for f in b["files"] if a.partition is not None and a.offset is not None and _holds(f, a)]
        if files:
            where += f", file {files[0]}"
        out.append(dataclasses.replace(a, sink_where=where))
    return out


def _holds(name: str, a: Anomaly) -> bool:
    p, lo, hi = _parse(name)
    return p == a.partition and a.offset is not None and lo <= a.offset < hi


def dstream_batches_json(oracle: Path) -> list[dict[str, Any]] | None:
    """A DStream run's batches as the report lists them (``None`` for another kind of run)."""
    batches = read_dstream(oracle)
    if batches is None:
        return None
    return [
        {"batch_id": s.batch_id, "start": s.start, "end": s.end, "committed": s.committed, "time_ms": b["time_ms"]}
        for s, b in zip(dstream_spans(batches), batches, strict=True)
    ]
