"""The Arrow narrowing of the multiset comparison gives exactly the checker's verdict on the whole input."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.verdict.checker import BatchSpan, check_exactly_once
from harness.verdict.multiset import narrow, rows_to_check

SCHEMA = pa.schema(
    [("partition", pa.int32()), ("offset", pa.int64()), ("seq", pa.int32()), ("key", pa.int32()), ("v", pa.int64())]
)
ROW = st.fixed_dictionaries(
    {
        "partition": st.integers(0, 1),
        "offset": st.integers(0, 6),
        "seq": st.integers(0, 1),
        "key": st.integers(0, 2),
        "v": st.integers(0, 3),
    }
)
SPANS = [BatchSpan(0, {0: 0, 1: 0}, {0: 3, 1: 3}), BatchSpan(1, {0: 3, 1: 3}, {0: 7, 1: 7}, committed=False)]


def _both(expected: list[dict[str, Any]], observed: list[dict[str, Any]], identity: tuple[str, ...]) -> tuple[Any, Any]:
    whole = check_exactly_once(expected, observed, batches=SPANS, identity=identity)
    exp_t, obs_t = pa.Table.from_pylist(expected, SCHEMA), pa.Table.from_pylist(observed, SCHEMA)
    e, o, totals = rows_to_check(exp_t, obs_t, identity)
    assert totals is not None, "Arrow should decide plain integer columns"
    narrowed = check_exactly_once(e, o, batches=SPANS, identity=identity, totals=totals)
    return whole, narrowed


@settings(max_examples=300, deadline=None)
@given(
    expected=st.lists(ROW, max_size=12),
    observed=st.lists(ROW, max_size=12),
    identity=st.sampled_from([("partition", "offset", "seq"), ("key",), ("partition", "key")]),
)
def test_narrowed_check_equals_the_whole_check(
    expected: list[dict[str, Any]], observed: list[dict[str, Any]], identity: tuple[str, ...]
) -> None:
    whole, narrowed = _both(expected, observed, identity)
    assert narrowed.valid == whole.valid
    assert narrowed.anomalies == whole.anomalies
    assert (narrowed.expected_rows, narrowed.observed_rows) == (whole.expected_rows, whole.observed_rows)


def test_only_the_rows_of_differing_identities_reach_python() -> None:
    expected = [{"partition": 0, "offset": o, "seq": 0, "key": o % 3, "v": o} for o in range(1000)]
    observed = [*expected, expected[10], expected[500]]  # two duplicates
    observed.remove(expected[20])  # one lost row
    exp_t, obs_t = pa.Table.from_pylist(expected, SCHEMA), pa.Table.from_pylist(observed, SCHEMA)
    narrowed = narrow(exp_t, obs_t, ("partition", "offset", "seq"))
    assert narrowed is not None
    assert sorted(r["offset"] for r in narrowed.expected) == [10, 20, 500]
    assert sorted(r["offset"] for r in narrowed.observed) == [10, 10, 500, 500]
    assert (narrowed.expected_total, narrowed.observed_total) == (1000, 1001)
    assert narrow(exp_t, exp_t, ("partition", "offset", "seq")) == type(narrowed)([], [], 1000, 1000)


def test_what_arrow_cannot_decide_falls_back_to_every_row() -> None:
    with_null = pa.Table.from_pylist([{"k": None, "v": 1}], pa.schema([("k", pa.int32()), ("v", pa.int64())]))
    assert narrow(with_null, with_null, ("k",)) is None
    other = pa.Table.from_pylist([{"x": 1}])
    assert narrow(with_null, other, ("k",)) is None
    e, o, totals = rows_to_check(with_null, with_null, ("k",))
    assert (e, o, totals) == ([{"k": None, "v": 1}], [{"k": None, "v": 1}], None)


def test_timestamps_and_column_order_are_compared_as_values() -> None:
    t = datetime(2024, 1, 1, tzinfo=UTC)
    exp = pa.Table.from_pylist([{"k": 1, "at": t}], pa.schema([("k", pa.int32()), ("at", pa.timestamp("us", "UTC"))]))
    obs = pa.Table.from_pylist([{"at": t, "k": 1}], pa.schema([("at", pa.timestamp("us", "UTC")), ("k", pa.int64())]))
    narrowed = narrow(exp, obs, ("k",))
    assert narrowed is not None and (narrowed.expected, narrowed.observed) == ([], [])


def test_a_cast_that_could_make_unequal_values_equal_is_not_narrowed() -> None:
    """Whole check: a string "1" is not the integer 1, a UTC time is not a naive one, a float32 is not
    the float64 it widens to. Arrow must not cast them equal: it leaves such inputs to the whole check."""
    t = datetime(2024, 1, 1, tzinfo=UTC)
    pairs = [
        (pa.table({"k": pa.array([1], pa.int64())}), pa.table({"k": pa.array(["1"])})),
        (pa.table({"k": pa.array([t], pa.timestamp("us", "UTC"))}), pa.table({"k": pa.array([t], pa.timestamp("us"))})),
        (pa.table({"k": pa.array([0.1], pa.float64())}), pa.table({"k": pa.array([0.1], pa.float32())})),
    ]
    for exp, obs in pairs:
        assert narrow(exp, obs, ("k",)) is None, (exp.schema, obs.schema)
        assert narrow(obs, exp, ("k",)) is None
        e, o, totals = rows_to_check(exp, obs, ("k",))
        assert totals is None and not check_exactly_once(e, o, identity=("k",)).valid
    widened = pa.table({"k": pa.array([1], pa.int32())})
    assert narrow(pa.table({"k": pa.array([1], pa.int64())}), widened, ("k",)) is not None


def test_nan_is_one_value_in_both_paths() -> None:
    exp = pa.table({"k": pa.array([1, 2], pa.int32()), "x": pa.array([float("nan"), 1.0])})
    whole = check_exactly_once(exp.to_pylist(), exp.to_pylist(), identity=("k",))
    assert whole.valid is True
    e, o, totals = rows_to_check(exp, exp, ("k",))
    assert check_exactly_once(e, o, identity=("k",), totals=totals).valid is True
