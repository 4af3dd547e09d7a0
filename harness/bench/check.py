"""Bench section ``check``: the verdict's cost as the output grows (rows 10^3 .. 10^6).

Each size is a replayable-source-shaped table with 5 lost and 10 duplicated rows; the check is
:func:`harness.verdict.multiset.rows_to_check` (Arrow counts, only differing identities reach Python) plus
:func:`harness.verdict.checker.check_exactly_once`, timed beside the whole-input Python comparison it replaced
(up to :data:`PYTHON_UP_TO` rows). ``slope`` is log10 of the time ratio per 10x rows (1.0 = linear).
"""

from __future__ import annotations

import math
import time
from typing import Any

from harness.verdict.checker import check_exactly_once
from harness.verdict.multiset import rows_to_check

SIZES = (10**3, 10**4, 10**5, 10**6)
PYTHON_UP_TO = 10**5
IDENTITY = ("partition", "offset", "seq")


def _tables(n: int) -> tuple[Any, Any]:
    import numpy as np
    import pyarrow as pa

    off = np.arange(n)
    expected = pa.table(
        {
            "partition": pa.array(off % 2, pa.int32()),
            "offset": pa.array(off // 2, pa.int64()),
            "seq": pa.array(np.zeros(n), pa.int32()),
            "key": pa.array(off % 16, pa.int32()),
            "value": pa.array(off * 7 % 1_000_003, pa.int64()),
            "event_time": pa.array(off * 1000 + 1_700_000_000_000, pa.timestamp("ms", "UTC")),
        }
    )
    observed = pa.concat_tables([expected.slice(0, n - 5), expected.slice(n - 50, 10)])
    return expected, observed


def check_growth(sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    """Seconds of the check per size (``arrow``; ``python`` up to :data:`PYTHON_UP_TO`) and the slope."""
    rows: list[dict[str, Any]] = []
    for n in sizes:
        expected, observed = _tables(n)
        t0 = time.perf_counter()
        exp, obs, totals = rows_to_check(expected, observed, IDENTITY)
        result = check_exactly_once(exp, obs, identity=IDENTITY, totals=totals)
        row: dict[str, Any] = {"rows": n, "arrow_s": time.perf_counter() - t0, "anomalies": result.counts()}
        if n <= PYTHON_UP_TO:
            t0 = time.perf_counter()
            check_exactly_once(expected.to_pylist(), observed.to_pylist(), identity=IDENTITY)
            row["python_s"] = time.perf_counter() - t0
        rows.append(row)
    first, last = rows[0], rows[-1]
    decades = math.log10(last["rows"] / first["rows"])
    slope = math.log10(last["arrow_s"] / first["arrow_s"]) / decades if decades else 0.0
    return {
        "sizes": rows,
        "check_slope": slope,
        "check_1e6_s": next((r["arrow_s"] for r in rows if r["rows"] == 10**6), None),
    }
