"""Upgrade runs: each anomaly says on which side of the deploy it lies.

Pure: reads only the oracle's files. A row anomaly (provenance) is placed by its batch against the deploy's first
batch; a group anomaly (an aggregate's window and key) by whether version 1 had emitted the group before the
deploy (``oracle/``:data:`V1_EXPECTED`, written by the driver's check).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from harness.verdict.checker import PROVENANCE, CheckResult, _norm

#: ``oracle/`` file of an upgrade run: version 1's expected rows over the batches it committed.
V1_EXPECTED = "deploy_v1_expected.parquet"


def side(batch_id: int | None, first_batch: int, version: str) -> str | None:
    """Where a batch lies against a deploy of ``version`` that runs from ``first_batch`` on (``None``: no batch)."""
    if batch_id is None:
        return None
    if batch_id < first_batch:
        return f"before the deploy (version 1 committed batch {batch_id})"
    if batch_id == first_batch:
        return f"at the deploy: batch {batch_id} is the first {version} ran"
    return f"after the deploy of {version} (batch {first_batch} on)"


def mark_deploy(
    result: CheckResult, oracle: Path, first_batch: int, version: str, identity: tuple[str, ...]
) -> CheckResult:
    """``result`` with every anomaly's ``deploy`` set (:func:`side`; for a group, whether version 1 emitted it)."""
    groups = _v1_groups(oracle / V1_EXPECTED, identity) if tuple(identity) != PROVENANCE else None
    marked = []
    for a in result.anomalies:
        where = side(a.batch_id, first_batch, version)
        if where is None and groups is not None:
            ident = tuple(_norm(a.row.get(c)) for c in identity)
            where = (
                "a group version 1 emitted before the deploy"
                if ident in groups
                else f"a group version 2 owes: not emitted before the deploy of {version} (batch {first_batch} on)"
            )
        marked.append(dataclasses.replace(a, deploy=where))
    return dataclasses.replace(result, anomalies=marked)


def _v1_groups(path: Path, identity: tuple[str, ...]) -> set[tuple[Any, ...]]:
    import pyarrow.parquet as pq

    if not path.exists():
        return set()
    rows = pq.read_table(path).to_pylist()
    return {tuple(_norm(r.get(c)) for c in identity) for r in rows}
