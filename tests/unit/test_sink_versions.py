"""harness/verdict/sink_versions.py: every anomaly of a run into a versioned table names the versions involved."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from harness.verdict.checker import Anomaly
from harness.verdict.sink_versions import VERSION_COLUMN, name_versions, write_versions

pytestmark = pytest.mark.unit

IDENTITY = ("partition", "offset", "seq")


def _anomaly(kind: str, batch: int | None, offset: int, **row: object) -> Anomaly:
    return Anomaly(kind, batch, 0, offset, 0, 1, 2, {"partition": 0, "offset": offset, "seq": 0, **row})


def _oracle(tmp_path: Path, batches: dict[int, list[int]]) -> Path:
    rows = pa.table(
        {"partition": [0, 0, 0], "offset": [10, 10, 11], "seq": [0, 0, 0], VERSION_COLUMN: pa.array([1, 2, 3])}
    )
    write_versions(tmp_path, "Delta", rows, batches)
    return tmp_path


def test_a_duplicate_names_both_versions_and_its_batch_commits(tmp_path: Path) -> None:
    oracle = _oracle(tmp_path, {0: [0], 1: [1, 2], 2: [3]})
    (named,) = name_versions([_anomaly("duplicate", 1, 10)], oracle, IDENTITY)
    assert named.sink_where == "Delta: row in version(s) 1, 2; batch 1 in version(s) 1, 2"


def test_a_lost_row_names_the_commit_its_batch_made_or_that_it_made_none(tmp_path: Path) -> None:
    oracle = _oracle(tmp_path, {0: [0], 2: [3]})
    lost_in_written, lost_unwritten = name_versions(
        [_anomaly("lost", 2, 40), _anomaly("lost", 1, 20)], oracle, IDENTITY
    )
    assert lost_in_written.sink_where == "Delta: row in no version; batch 2 in version(s) 3"
    assert lost_unwritten.sink_where == "Delta: row in no version; no version carries batch 1"


def test_a_group_no_batch_explains_names_its_writer_and_the_batches_written_twice(tmp_path: Path) -> None:
    oracle = _oracle(tmp_path, {0: [0], 1: [1, 2], 2: [3]})
    (named,) = name_versions([_anomaly("wrong-value", None, 11)], oracle, IDENTITY)
    assert named.sink_where == (
        "Delta: row in version(s) 3 (batch 2); batch(es) written more than once: 1 (versions 1, 2)"
    )


def test_a_run_without_version_files_is_left_as_it_was(tmp_path: Path) -> None:
    anomaly = _anomaly("duplicate", 1, 10)
    assert name_versions([anomaly], tmp_path, IDENTITY) == [anomaly]
