"""The ``tws_sessions`` oracle, checked without Spark.

- Hand-computed records: a session ended by its key's next row, one ended by its timer (the watermark strictly
  past it), and one the watermark has not passed.
- The oracle's claim that batch boundaries do not matter: a model of Spark's ``transformWithState`` in event-time
  mode (each batch: every key's rows in offset order, then the timers that ``timestamp < watermark`` expires,
  with the watermark from the earlier batches) gives, for input drawn the way the scenario's source makes it and
  for any split into batches, exactly the records :func:`expected_records` computes over the whole input.
- The same model with a batch applied twice to the open sessions (the side-store twin after a replay) does not.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.library import tws_sessions as tws
from scenarios.rowgen import SourceConfig

T0 = 1_700_000_000_000


def row(offset: int, key: int, value: int, seconds: float, seq: int = 0) -> dict[str, Any]:
    return {"partition": 0, "offset": offset, "seq": seq, "key": key, "value": value, "ts_ms": T0 + int(seconds * 1000)}


def kinds(records: list[dict[str, Any]]) -> list[tuple[str, int, int, int, int]]:
    return [(r["kind"], r["key"], r["offset"], r["rows"], r["total"]) for r in records]


def test_sessions_end_by_gap_and_by_a_timer_strictly_before_the_watermark() -> None:
    rows = [row(0, 1, 10, 0), row(1, 1, 20, 1), row(2, 2, 5, 2), row(3, 1, 30, 5), row(9, 1, 7, 9.001)]
    # key 1: 0 s, 1 s, 5 s (gap 4 s: same session), 9.001 s (gap 4.001 s > GAP_MS: a new session).
    records = tws.expected_records(rows, watermark_ms=None)
    assert kinds(records) == [
        ("row", 1, 0, 1, 10),
        ("row", 1, 1, 2, 30),
        ("row", 2, 2, 1, 5),
        ("row", 1, 3, 3, 60),
        ("session", 1, 0, 3, 60),
        ("row", 1, 9, 1, 7),
    ]
    assert records[3]["recent"] == 60 and records[3]["buckets"] == "1/1/1"  # 10 % 3, 20 % 3, 30 % 3
    # Key 2's session (newest event 2 s) has its timer at 6.001 s: a watermark of 7 s ends it, one of 6 s not.
    assert [r["key"] for r in tws.expected_records(rows, T0 + 7_000) if r["kind"] == "session"] == [1, 2]
    assert [r["key"] for r in tws.expected_records(rows, T0 + 6_000) if r["kind"] == "session"] == [1]


def test_recent_keeps_the_last_three_values_of_the_session() -> None:
    rows = [row(i, 0, v, i) for i, v in enumerate((1, 2, 4, 8))]
    assert [r["recent"] for r in tws.expected_records(rows, None)] == [1, 3, 7, 14]


def source_rows(seed: int, offsets: int) -> list[dict[str, Any]]:
    """The scenario's own input: one partition, two rows an offset, event seconds as its transform makes them."""
    config = SourceConfig(seed=seed, partitions=1, rows_per_offset=2, **tws.SESSIONS["source_overrides"])
    out = []
    for p, o, s, key, value, event_time in config.rows(0, 0, offsets):
        ts_ms = math.floor(event_time.timestamp() * 1000 / 1000) * 1000
        out.append({"partition": p, "offset": o, "seq": s, "key": key, "value": value, "ts_ms": ts_ms})
    return out


def spark_model(batches: list[list[dict[str, Any]]], replayed: int | None = None) -> tuple[list[dict], int | None, int]:
    """Records of the batches as Spark's operator makes them, the last batch's watermark and how many sessions
    timers ended. ``replayed``: that batch's rows are applied to the open sessions once more, as a store Spark
    does not roll back would after a replay (its records of the first attempt are the ones that count)."""
    state: dict[int, tws.Sessionizer] = {}
    out: list[dict[str, Any]] = []
    seen: list[int] = []
    watermark = None
    timer_ends = 0
    for b, batch in enumerate(batches):
        watermark = max(seen) - tws.DELAY_MS if seen else None
        for attempt in range(2 if b == replayed else 1):
            records = []
            for r in sorted(batch, key=lambda r: (r["offset"], r["seq"])):
                assert watermark is None or r["ts_ms"] > watermark, "a late row: the source settings changed"
                s = state.setdefault(r["key"], tws.Sessionizer(None, {}, []))
                records += s.add(r["key"], r["partition"], r["offset"], r["seq"], r["value"], r["ts_ms"])
            if attempt == 0:
                out += records
        for key, s in sorted(state.items()):
            if s.session is not None and watermark is not None and s.session.timer_ms < watermark:
                out.append(s.close(key))
                timer_ends += 1
        seen += [r["ts_ms"] for r in batch]
    return out, watermark, timer_ends, state


def split(rows: list[dict[str, Any]], cuts: list[int]) -> list[list[dict[str, Any]]]:
    """``rows`` cut into batches at the offsets in ``cuts`` (whole offsets, as the source admits them)."""
    bounds: list[float] = [*sorted({c for c in cuts if c > 0}), math.inf]
    batches, start = [], 0
    for end in bounds:
        batch = [r for r in rows if start <= r["offset"] < end]
        if batch:
            batches.append(batch)
        start = end
    return batches


def as_multiset(records: list[dict[str, Any]]) -> Counter:
    return Counter(tuple(sorted(r.items())) for r in records)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32), offsets=st.integers(1, 80), cuts=st.lists(st.integers(1, 79), max_size=12))
def test_any_batching_gives_the_oracles_records(seed: int, offsets: int, cuts: list[int]) -> None:
    rows = source_rows(seed, offsets)
    batches = split(rows, cuts)
    got, watermark, _, state = spark_model(batches)
    assert as_multiset(got) == as_multiset(tws.expected_records(rows, watermark))
    # The state the model's operator holds at the end is the final state the scenario expects of Spark.
    left = {k: s for k, s in state.items() if s.session is not None}
    sessions = [(k, s.session.partition, s.session.offset, s.session.seq, s.session.rows, s.session.total,
                 s.session.last_ms) for k, s in sorted(left.items()) if s.session]  # fmt: skip
    assert tws.final_state_rows(rows, watermark, "session") == sessions
    assert tws.final_state_rows(rows, watermark, "buckets") == [
        (k, b, n) for k, s in sorted(left.items()) for b, n in sorted(s.buckets.items())
    ]
    recent = [(k, v) for k, s in sorted(left.items()) for v in s.recent]
    assert tws.final_state_rows(rows, watermark, "recent") == recent


def test_the_model_sees_timers_and_gaps_and_a_replay_into_a_side_store_is_wrong() -> None:
    """The property above is not vacuous: over the scenario's input timers do end sessions (before any later row
    of their key would), sessions run long, and the twin's bug (one batch applied twice to the open sessions)
    changes the records."""
    rows = source_rows(7, 60)
    batches = split(rows, list(range(10, 60, 10)))
    got, watermark, timer_ends, _ = spark_model(batches)
    expected = tws.expected_records(rows, watermark)
    assert timer_ends >= 2, "no session ended by its timer"
    assert sum(r["kind"] == "session" for r in expected) >= 10 and max(r["rows"] for r in expected) >= 5
    assert as_multiset(got) == as_multiset(expected)
    twice, _, _, _ = spark_model(batches, replayed=2)
    assert as_multiset(twice) != as_multiset(expected)
