from __future__ import annotations

from datetime import UTC, datetime

from harness.verdict.checker import BatchSpan, FaultRef, check_exactly_once


def row(p: int, o: int, v: int = 0) -> dict[str, object]:
    return {"partition": p, "offset": o, "seq": 0, "v": v, "t": datetime(2024, 1, 1, tzinfo=UTC)}


BATCHES = [
    BatchSpan(0, {0: 0, 1: 0}, {0: 2, 1: 2}),
    BatchSpan(1, {0: 2, 1: 2}, {0: 4, 1: 3}),
]
FAULTS = [FaultRef(5, 0, "after_offsets_logged", "k1"), FaultRef(9, 1, "sink.commit.after", "k2")]
EXPECTED = [row(p, o) for p in (0, 1) for o in range(4 if p == 0 else 3)]


def test_identical_multisets_pass() -> None:
    result = check_exactly_once(EXPECTED, list(reversed(EXPECTED)), batches=BATCHES, faults=FAULTS)
    assert result.valid is True and result.verdict == "exactly-once"
    assert result.anomalies == [] and result.expected_rows == result.observed_rows == 7


def test_duplicate_is_traced_to_batch_offsets_and_fault() -> None:
    observed = [*EXPECTED, row(0, 3)]
    result = check_exactly_once(EXPECTED, observed, batches=BATCHES, faults=FAULTS)
    assert result.verdict == "violated"
    [a] = result.anomalies
    assert (a.kind, a.batch_id, a.partition, a.offset) == ("duplicate", 1, 0, 3)
    assert (a.expected_count, a.observed_count) == (1, 2)
    assert a.offset_range == {"0": [2, 4], "1": [2, 3]}
    assert a.fault is not None and a.fault.history_index == 9
    assert result.counts() == {"duplicate": 1}


def test_lost_row_uses_the_last_fault_at_or_before_its_batch() -> None:
    observed = [r for r in EXPECTED if (r["partition"], r["offset"]) != (1, 1)]
    [a] = check_exactly_once(EXPECTED, observed, batches=BATCHES, faults=FAULTS).anomalies
    assert (a.kind, a.batch_id, a.partition, a.offset) == ("lost", 0, 1, 1)
    assert a.fault is not None and a.fault.history_index == 5


def test_distinct_would_hide_this_but_multiset_does_not() -> None:
    result = check_exactly_once(EXPECTED, EXPECTED + EXPECTED[:2])
    assert result.counts() == {"duplicate": 2}
    assert all(a.batch_id is None and a.fault is None for a in result.anomalies)


def test_phantom_and_divergent_rows() -> None:
    observed = [*EXPECTED[1:], {**EXPECTED[0], "v": 99}, row(5, 0)]
    kinds = sorted(a.kind for a in check_exactly_once(EXPECTED, observed, batches=BATCHES).anomalies)
    assert kinds == ["lost", "phantom", "replay-divergent"]


def test_checker_crash_is_unknown_never_a_pass() -> None:
    result = check_exactly_once([{"partition": 0, "offset": 0, "seq": 0, "v": [1]}], [])
    assert result.valid == "unknown" and result.verdict == "unknown"
    assert "checker crashed" in (result.error or "")


def test_groups_with_other_values_are_one_wrong_value_anomaly() -> None:
    expected = [{"window": "w1", "key": 1, "count": 7}, {"window": "w1", "key": 2, "count": 3}]
    observed = [{"window": "w1", "key": 1, "count": 13}, {"window": "w1", "key": 2, "count": 3}]
    faults = [FaultRef(4, 2, "sink.commit.after", "k1")]
    result = check_exactly_once(expected, observed, identity=("window", "key"), faults=faults)
    [a] = result.anomalies
    assert a.kind == "wrong-value" and a.row["count"] == 7 and a.observed_row == observed[0]
    assert a.fault is not None and a.fault.history_index == 4  # no batch to locate: the run's last fault
    assert result.counts() == {"wrong-value": 1}


def test_rows_of_an_uncommitted_batch_are_uncommitted_visible() -> None:
    batches = [BatchSpan(0, {0: 0, 1: 0}, {0: 2, 1: 2}), BatchSpan(1, {0: 2, 1: 2}, {0: 4, 1: 3}, committed=False)]
    kinds = sorted(a.kind for a in check_exactly_once(EXPECTED, [*EXPECTED, row(0, 3)], batches=batches).anomalies)
    assert kinds == ["duplicate", "uncommitted-visible"]


def test_checkpoint_anomalies_make_the_run_violated() -> None:
    from harness.verdict.checker import Anomaly

    regression = Anomaly("offset-regression", 3, None, None, None, 0, 0, {}, detail="[offset-regression] offsets/3")
    result = check_exactly_once(EXPECTED, EXPECTED, checkpoint_anomalies=[regression])
    assert result.verdict == "violated" and result.counts() == {"offset-regression": 1}
