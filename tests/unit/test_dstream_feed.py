"""harness/engine/dstream.py: the observer's batch is checked against what the harness published for it before
anything is blamed on the application; run directories and options Spark cannot take are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.engine.dstream import _unread
from harness.engine.rundir import path_problem
from scenarios.filedir import file_name

ENTRY = {"batch": 1, "time_ms": 6000, "files": [file_name(0, 5, 9, "json"), file_name(1, 0, 4, "json")]}


def test_a_batch_that_read_what_was_published_is_fine() -> None:
    record = {"batch": 1, "time_ms": 6000, "rows": 8, "ranges": {"0": [5, 9], "1": [0, 4]}}
    assert _unread(record, [ENTRY]) == ""


@pytest.mark.parametrize("ranges", [{}, {"0": [5, 9]}, {"0": [5, 8], "1": [0, 4]}])
def test_a_batch_that_read_none_or_part_of_its_files_names_them(ranges: dict[str, list[int]]) -> None:
    record = {"batch": 1, "time_ms": 6000, "rows": 0, "ranges": ranges}
    why = _unread(record, [ENTRY])
    assert why.startswith("DStream batch 1 (batch time 6000) read 0 row(s), but the harness published ")
    assert "no verdict" in why
    short = {"1"} if ranges == {"0": [5, 9]} else ({"0"} if "1" in ranges else {"0", "1"})
    for partition, name in ((0, ENTRY["files"][0]), (1, ENTRY["files"][1])):
        assert (name in why) == (str(partition) in short)


def test_a_batch_of_no_round_is_not_checked_here() -> None:
    assert _unread({"batch": 7, "time_ms": 1, "rows": 0, "ranges": {}}, [ENTRY]) == ""


@pytest.mark.parametrize("name", ["a:b", "x[1]", "run*", "c{d}"])
def test_a_directory_spark_cannot_take_is_refused_naming_the_character(tmp_path: Path, name: str) -> None:
    why = path_problem(tmp_path / name / "run", "--run-dir")
    assert why is not None and why.startswith("--run-dir ") and "\n" not in why
    assert any(repr(c) in why for c in name if not c.isalnum())


def test_spaces_and_dots_are_fine(tmp_path: Path) -> None:
    assert path_problem(tmp_path / "my runs" / "v1.2" / "x-y_z", "--run-dir") is None
