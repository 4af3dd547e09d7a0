"""The multiset comparison where the data is: Arrow group-by-count of whole rows on both sides, a join of
the counts, and only the rows of identities whose counts differ come back to Python for the checker.

The checker (:func:`harness.verdict.checker.check_exactly_once`) classifies differences per identity (the
provenance key, or a scenario's group columns), so handing it every row of each identity that has a
difference, and no row of an identity without one, gives exactly the anomalies the whole input gives.
Over-inclusion is harmless (a row with equal counts yields no anomaly), so whatever Arrow cannot decide
exactly (null identities, types it cannot group or join) makes :func:`narrow` return ``None`` and the
caller compares everything in Python as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

_COUNT = "__harness_count"


@dataclass(frozen=True)
class Narrowed:
    """The rows the checker needs, and the totals of the whole input."""

    expected: list[dict[str, Any]]
    observed: list[dict[str, Any]]
    expected_total: int
    observed_total: int


def _counts(table: pa.Table, columns: list[str]) -> pa.Table:
    counted = table.group_by(columns, use_threads=False).aggregate([([], "count_all")])
    return counted.rename_columns([*columns, _COUNT])


def _same_values(want: pa.DataType, got: pa.DataType) -> bool:
    """Whether casting ``got`` to ``want`` keeps every value equal as Python compares them: the same type,
    integers of another width (a safe cast refuses an overflow), or timestamps of another unit in the same
    time zone (a safe cast refuses a loss). Anything else (strings, floats of another precision, decimals,
    another time zone) could make unequal values equal."""
    if want == got:
        return True
    if pa.types.is_integer(want) and pa.types.is_integer(got):
        return True
    return bool(pa.types.is_timestamp(want) and pa.types.is_timestamp(got) and want.tz == got.tz)


def narrow(expected: pa.Table, observed: pa.Table, identity: Sequence[str]) -> Narrowed | None:
    """The rows of every identity whose whole-row counts differ between ``expected`` and ``observed``;
    ``None`` when Arrow cannot decide that exactly here (the caller then compares everything)."""
    columns = expected.column_names
    ident = list(identity)
    if sorted(observed.column_names) != sorted(columns) or not set(ident) <= set(columns):
        return None
    if len(set(columns)) != len(columns):
        return None
    if not all(_same_values(expected.schema.field(c).type, observed.schema.field(c).type) for c in columns):
        return None
    try:
        observed = observed.select(columns).cast(expected.schema)
        for table in (expected, observed):
            if any(table.column(c).null_count for c in ident):
                return None  # a null identity never matches in a join
        joined = _counts(expected, columns).join(
            _counts(observed, columns), keys=columns, join_type="full outer", left_suffix="_e", right_suffix="_o"
        )
        e = pc.fill_null(joined.column(f"{_COUNT}_e"), 0)
        o = pc.fill_null(joined.column(f"{_COUNT}_o"), 0)
        differing = joined.filter(pc.not_equal(e, o)).select(ident)
        if differing.num_rows == 0:
            return Narrowed([], [], expected.num_rows, observed.num_rows)
        keys = differing.group_by(ident, use_threads=False).aggregate([])
        picked = [t.join(keys, keys=ident, join_type="left semi") for t in (expected, observed)]
    except (pa.ArrowException, KeyError):
        return None
    return Narrowed(picked[0].to_pylist(), picked[1].to_pylist(), expected.num_rows, observed.num_rows)


def rows_to_check(
    expected: pa.Table, observed: pa.Table, identity: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], tuple[int, int] | None]:
    """``(expected rows, observed rows, totals)`` for :func:`harness.verdict.checker.check_exactly_once`: the
    narrowed rows with the whole input's totals, or every row (and ``None``) where :func:`narrow` cannot
    decide."""
    narrowed = narrow(expected, observed, identity)
    if narrowed is None:
        return expected.to_pylist(), observed.to_pylist(), None
    return narrowed.expected, narrowed.observed, (narrowed.expected_total, narrowed.observed_total)
