"""The final-state check on files written by hand (no Spark): equal state passes, a leaked or a lost row is a
``state-mismatch`` naming the variable, the row and the fault before it; a variable Spark's reader cannot read
for a known reason is reported as not checked, and any other failure leaves no verdict (never a silent pass)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from harness.verdict.checker import FaultRef
from harness.verdict.state_check import ERROR, EXPECTED, OBSERVED, UNREADABLE, VARIABLE, check_final_state, state_file

KILL = FaultRef(7, 2, "sink.commit.after", "x1: kill at sink.commit.after of batch 2")


def write(oracle: Path, name: str, expected: list[dict], observed: list[dict]) -> None:
    state_file(oracle, 0, name, EXPECTED).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(expected), state_file(oracle, 0, name, EXPECTED))
    pq.write_table(pa.Table.from_pylist(observed), state_file(oracle, 0, name, OBSERVED))


def test_no_declared_state_is_no_check(tmp_path: Path) -> None:
    assert check_final_state(tmp_path, 5, [KILL]) is None


def test_equal_state_passes_whatever_the_row_and_column_order(tmp_path: Path) -> None:
    rows = [{"key": 1, "bucket": 0, "rows": 2}, {"key": 2, "bucket": 1, "rows": 1}]
    write(tmp_path, "buckets", rows, [{"rows": r["rows"], "bucket": r["bucket"], "key": r["key"]} for r in rows[::-1]])
    check = check_final_state(tmp_path, 5, [KILL])
    assert check is not None and check.anomalies == [] and check.error is None
    assert check.variables == {"0-buckets": 2}
    assert check.describe() == "final state as expected: 0-buckets (2 row(s))"


def test_a_leaked_a_lost_and_a_doubled_row_are_named_with_the_fault_before_them(tmp_path: Path) -> None:
    expected = [{"key": 1, "value": 10}, {"key": 2, "value": 20}, {"key": 4, "value": 40}]
    observed = [{"key": 1, "value": 10}, {"key": 3, "value": 30}, {"key": 4, "value": 40}, {"key": 4, "value": 40}]
    write(tmp_path, "recent", expected, observed)
    check = check_final_state(tmp_path, 5, [KILL])
    assert check is not None and check.error is None
    found = {(a.row["key"], a.expected_count, a.observed_count, a.detail) for a in check.anomalies}
    assert found == {
        (2, 1, 0, "0-recent: missing from Spark's state (0x, expected 1x)"),
        (3, 0, 1, "0-recent: in Spark's state but not expected (1x, expected 0x)"),
        (4, 1, 2, "0-recent: in Spark's state a different number of times (2x, expected 1x)"),
    }
    assert all(a.kind == "state-mismatch" and a.batch_id == 5 and a.fault == KILL for a in check.anomalies)
    assert {a.row[VARIABLE] for a in check.anomalies} == {"0-recent"}
    assert check.describe().startswith("final state 3 row(s) differ: 0-recent (4 row(s))")


def test_other_columns_than_expected_leave_no_verdict(tmp_path: Path) -> None:
    write(tmp_path, "session", [{"key": 1, "rows": 2}], [{"key": 1, "rows": 2, "total": 9}])
    check = check_final_state(tmp_path, 5, [KILL])
    assert check is not None and check.error and "expects columns ['key', 'rows']" in check.error, check.error
    assert check.describe().startswith("final state not checked, no verdict: ")


def test_a_known_reader_limit_skips_that_variable_only(tmp_path: Path) -> None:
    write(tmp_path, "buckets", [{"key": 1}], [{"key": 1}])
    state_file(tmp_path, 0, "session", UNREADABLE).write_text("statestore reader, operator 0 session: format 2\n")
    check = check_final_state(tmp_path, 5, [KILL])
    assert check is not None and check.error is None and check.anomalies == []
    assert check.variables == {"0-buckets": 1} and check.unreadable == {"0-session": check.unreadable["0-session"]}
    assert check.describe().splitlines() == [
        "final state as expected: 0-buckets (1 row(s))",
        "final state of 0-session not checked: statestore reader, operator 0 session: format 2",
    ]


def test_any_other_reader_failure_leaves_no_verdict(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    state_file(tmp_path, 0, "sesion", ERROR).write_text("statestore reader, operator 0 sesion: no such variable\n")
    check = check_final_state(tmp_path, 5, [KILL])
    assert check is not None and check.error == "0-sesion: statestore reader, operator 0 sesion: no such variable"
    assert check.to_json()["error"] == check.error
