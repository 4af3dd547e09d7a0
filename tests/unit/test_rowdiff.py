"""Row diffs (chispa's table, oracle left, sink right) built from a verdict's anomalies alone."""

from __future__ import annotations

import io
from dataclasses import asdict
from pathlib import Path

import pytest

from harness.engine.outcome import RunOutcome
from harness.engine.report import render_text
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.verdict.checker import BatchSpan, check_exactly_once
from harness.verdict.rowdiff import HEADER, MAX_KEYS, row_diff, sides, use_color


def _row(offset: int, value: int, partition: int = 0) -> dict[str, int]:
    return {"partition": partition, "offset": offset, "seq": 0, "value": value}


def _anomalies(expected: list[dict[str, int]], observed: list[dict[str, int]], **kw: object) -> list[dict]:
    result = check_exactly_once(expected, observed, batches=[BatchSpan(0, {0: 0, 1: 0}, {0: 50, 1: 50})], **kw)
    return [asdict(a) for a in result.anomalies]


def _columns(table: str) -> list[tuple[str, str]]:
    """(df1 cell, df2 cell) of each body line of chispa's table."""
    cells = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("|")]
    return [(a.strip(), b.strip()) for a, b in cells[1:]]  # cells[0] is the header


def test_oracle_rows_are_left_and_sink_rows_right() -> None:
    """Swapping the sides (the sink's rows under df1) fails every assertion on the cells below."""
    expected = [_row(1, 10), _row(2, 20), _row(3, 30, partition=1)]
    observed = [_row(1, 10), _row(1, 10), _row(3, 30, partition=1), _row(9, 90)]  # dup 1, lost 2, phantom 9
    diff = row_diff(_anomalies(expected, observed))
    assert diff is not None and diff.splitlines()[0] == HEADER
    rows = _columns(diff)
    lost = "Row(partition=0, offset=2, seq=0, value=20)"
    assert (lost, "None") in rows, rows  # lost: in the oracle only
    dup = "partition=0, offset=1, seq=0, value=10"
    assert (dup, dup) in rows and ("None", f"Row({dup})") in rows  # duplicate: the extra copy on the sink's side
    assert ("None", "Row(partition=0, offset=9, seq=0, value=90)") in rows  # phantom: in the sink only
    assert not any("offset=3" in a or "offset=3" in b for a, b in rows), "a correct row is shown"
    assert "\x1b[" not in diff


def test_a_changed_value_pairs_the_oracle_row_with_what_readers_see() -> None:
    expected = [{"window": "w1", "key": 2, "cnt": 4}]
    observed = [{"window": "w1", "key": 2, "cnt": 8}]
    anomalies = _anomalies(expected, observed, identity=("window", "key"))
    assert [a["kind"] for a in anomalies] == ["wrong-value"]
    assert sides(anomalies) == [([expected[0]], [observed[0]])]
    # Without provenance columns, a row's columns come in the checker's (name) order.
    assert _columns(row_diff(anomalies) or "") == [("cnt=4, key=2, window=w1", "cnt=8, key=2, window=w1")]
    colored = row_diff(anomalies, color=True) or ""
    assert "\x1b[31m" in colored and "cnt=8" in colored  # chispa marks the differing cell red


def test_checkpoint_findings_have_no_rows_and_keys_are_capped() -> None:
    finding = {
        "kind": "offset-regression",
        "partition": None,
        "offset": None,
        "seq": None,
        "expected_count": 0,
        "observed_count": 0,
        "row": {},
        "detail": "offsets went backwards",
    }
    assert row_diff([finding]) is None
    expected = [_row(o, o) for o in range(MAX_KEYS + 5)]
    diff = row_diff([*_anomalies(expected, []), finding]) or ""
    assert len(_columns(diff)) == MAX_KEYS
    assert diff.splitlines()[-1].startswith("... and 5 more key(s)")


def test_each_key_keeps_its_own_lines_even_with_uneven_counts() -> None:
    expected = [_row(1, 10), _row(2, 20)]
    observed = [_row(1, 10)] * 3  # key 1 seen 3 times, key 2 lost
    rows = _columns(row_diff(_anomalies(expected, observed)) or "")
    assert rows[0] == ("Row(partition=0, offset=2, seq=0, value=20)", "None")  # lost rows come first
    assert [("offset=1" in a or a == "None", "offset=1" in b) for a, b in rows[1:]] == [(True, True)] * 3


def test_colour_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(Tty()) and not use_color(io.StringIO()) and not use_color(Tty(), no_color=True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(Tty())


def test_the_run_report_shows_the_rows(tmp_path: Path) -> None:
    expected = [_row(o, o) for o in range(5)]
    result = check_exactly_once(expected, [*expected, expected[3]], batches=[BatchSpan(0, {0: 0}, {0: 5})])
    outcome = RunOutcome(
        RunSpec("foreachbatch_append_naive", 7, kills=0), RunPaths(tmp_path), "x", [], [], result=result
    )
    text = render_text(outcome)
    assert HEADER in text and "Row(partition=0, offset=3, seq=0, value=3)" in text
    assert text.index(HEADER) < text.index("replay: ")


def test_a_sink_row_with_a_column_the_oracle_lacks_is_shown_not_a_crash() -> None:
    """A sink that adds a column (a partition directory ``batch=1`` read back) makes rows of different fields;
    chispa alone raised on them, and the report died with a traceback."""
    expected = [_row(1, 10)]
    observed = [{**_row(1, 10), "batch": 1}]
    diff = row_diff(_anomalies(expected, observed))
    assert diff is not None
    cells = [cell for pair in _columns(diff) for cell in pair]
    assert any("batch=None" in c for c in cells) and any("batch=1" in c for c in cells), diff
