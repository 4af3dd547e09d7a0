"""Naming, in every anomaly of a run into a versioned table sink (Delta), the table versions involved.

The driver writes what the table says after the run (``Scenario.sink_versions``) into the run's ``oracle/``:
:data:`ROWS_FILE` (identity columns + the version that added each row) and :data:`BATCHES_FILE` (the label and,
per batch id, the versions whose commit it made). :func:`name_versions` adds to each anomaly a ``sink_where``
such as ``Delta: row in version(s) 3, 5; batch 1 in version(s) 3, 5``: a duplicate's two copies, the commit a
lost row's batch made (or that it made none); for a group no one batch explains (an over-counted total), the
version and batch that last wrote it and every batch written more than once.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.verdict.checker import Anomaly, _norm
from scenarios.base import VERSION_COLUMN

__all__ = ["BATCHES_FILE", "ROWS_FILE", "VERSION_COLUMN", "name_versions", "write_versions"]

ROWS_FILE = "sink_versions.parquet"
BATCHES_FILE = "sink_versions.json"


def write_versions(oracle: Path, label: str, rows: Any, batches: Mapping[int, Sequence[int]]) -> None:
    """Write :data:`ROWS_FILE` (the Arrow table ``rows``) and :data:`BATCHES_FILE` into ``oracle``."""
    import pyarrow.parquet as pq

    pq.write_table(rows, oracle / ROWS_FILE)
    doc = {"label": label, "batches": {str(b): sorted(v) for b, v in sorted(batches.items())}}
    (oracle / BATCHES_FILE).write_text(json.dumps(doc, indent=1) + "\n")


def _versions_list(versions: Sequence[int]) -> str:
    return ", ".join(str(v) for v in sorted(set(versions)))


def name_versions(anomalies: Sequence[Anomaly], oracle: Path, identity: Sequence[str]) -> list[Anomaly]:
    """``anomalies`` with ``sink_where`` set from the files in ``oracle``; unchanged when the run wrote none.
    Raises ``OSError``/``ValueError`` on unreadable files (the caller reports that, the verdict stands)."""
    import pyarrow.parquet as pq

    if not (oracle / BATCHES_FILE).exists() or not anomalies:
        return list(anomalies)
    doc = json.loads((oracle / BATCHES_FILE).read_text())
    label = str(doc.get("label", "table"))
    batches = {int(b): [int(v) for v in vs] for b, vs in dict(doc.get("batches", {})).items()}
    rows = pq.read_table(oracle / ROWS_FILE)
    names = [c for c in identity if c in rows.column_names]
    by_id: dict[tuple[Any, ...], list[int]] = {}
    cols = [rows.column(c).to_pylist() for c in names]
    for i, version in enumerate(rows.column(VERSION_COLUMN).to_pylist()):
        by_id.setdefault(tuple(_norm(col[i]) for col in cols), []).append(int(version))
    batch_of = {v: b for b, vs in batches.items() for v in vs}
    twice = ", ".join(f"{b} (versions {_versions_list(vs)})" for b, vs in sorted(batches.items()) if len(vs) > 1)
    out = []
    for a in anomalies:
        parts = []
        if a.row and names:
            held = sorted(set(by_id.get(tuple(_norm(a.row.get(c)) for c in names), [])))
            shown = [f"{v} (batch {batch_of[v]})" if a.batch_id is None and v in batch_of else str(v) for v in held]
            parts.append(f"row in version(s) {', '.join(shown)}" if held else "row in no version")
        if a.batch_id is None and twice:  # a group no one batch explains: name the batches written twice
            parts.append(f"batch(es) written more than once: {twice}")
        if a.batch_id is not None:
            carried = batches.get(a.batch_id)
            if carried:
                parts.append(f"batch {a.batch_id} in version(s) {_versions_list(carried)}")
            elif batches:  # the sink records batches, but none carries this one
                parts.append(f"no version carries batch {a.batch_id}")
        out.append(dataclasses.replace(a, sink_where=f"{label}: {'; '.join(parts)}") if parts else a)
    return out
