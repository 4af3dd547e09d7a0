"""The final-state check on files written by hand (no Spark): equal state passes, a leaked or a lost row is a
``state-mismatch`` naming the variable, the row and the fault before it, and an unreadable state is reported as
not checked (never a silent pass)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from harness.verdict.checker import FaultRef
from harness.verdict.state_check import STATE_DIR, UNREADABLE, check_final_state, state_files

KILL = FaultRef(7, 2, "sink.commit.after", "x1: kill at sink.commit.after of batch 2")


def write(oracle: Path, name: str, expected: list[dict], observed: list[dict]) -> None:
    exp_path, obs_path = state_files(oracle, 0, name)
    exp_path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(expected), exp_path)
    pq.write_table(pa.Table.from_pylist(observed), obs_path)


def test_no_declared_state_is_no_check(tmp_path: Path) -> None:
    assert check_final_state(tmp_path, 5, [KILL]) is None


def test_equal_state_passes_whatever_the_row_order(tmp_path: Path) -> None:
    rows = [{"key": 1, "bucket": 0, "rows": 2}, {"key": 2, "bucket": 1, "rows": 1}]
    write(tmp_path, "buckets", rows, rows[::-1])
    check = check_final_state(tmp_path, 5, [KILL])
    assert check is not None and check.anomalies == [] and check.variables == {"0-buckets": 2}
    assert check.describe() == "final state as expected: 0-buckets (2 row(s))"


def test_a_leaked_and_a_lost_row_are_named_with_the_fault_before_them(tmp_path: Path) -> None:
    expected = [{"key": 1, "value": 10}, {"key": 2, "value": 20}]
    observed = [{"value": 10, "key": 1}, {"key": 3, "value": 30}]  # columns in another order: compared by name
    write(tmp_path, "recent", expected, observed)
    check = check_final_state(tmp_path, 5, [KILL])
    assert check is not None
    found = {(a.row["key"], a.expected_count, a.observed_count, a.detail) for a in check.anomalies}
    assert found == {
        (2, 1, 0, "0-recent: missing from Spark's state (0x, expected 1x)"),
        (3, 0, 1, "0-recent: in Spark's state but not expected (1x, expected 0x)"),
    }
    assert all(a.kind == "state-mismatch" and a.batch_id == 5 and a.fault == KILL for a in check.anomalies)
    assert check.describe().startswith("final state 2 row(s) differ: 0-recent (2 row(s))")


def test_an_unreadable_state_says_why_and_compares_nothing(tmp_path: Path) -> None:
    write(tmp_path, "session", [{"key": 1}], [])
    (tmp_path / STATE_DIR / UNREADABLE).write_text("statestore reader, operator 0 session: NumberFormatException\n")
    check = check_final_state(tmp_path, 5, [KILL])
    assert check is not None and check.anomalies == [] and check.unreadable
    assert check.describe() == "final state not checked: statestore reader, operator 0 session: NumberFormatException"
    assert check.to_json() == {"variables": {}, "unreadable": check.unreadable, "mismatches": 0}
