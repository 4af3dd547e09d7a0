"""``inspect --state``'s cross-check, on a checkpoint written by hand and the view Spark's readers would give of
it (no Spark): a view that matches the files agrees on every fact; each wrong fact is named; a view without
operators is a skip with the readers' reason, never a pass."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from harness.inspector.cross_check import cross_check, render_cross_check
from harness.inspector.load import load_checkpoint
from harness.inspector.spark_view import SparkStateView, StoreView
from harness.inspector.synth import synth_checkpoint


@pytest.fixture
def model(tmp_path: Path) -> Any:
    return load_checkpoint(synth_checkpoint(tmp_path / "ck", 5, stateful=True), None, verify_checksums=False)


def view(**meta: Any) -> SparkStateView:
    """What Spark's readers say of ``synth_checkpoint(..., 5, stateful=True)``, with ``meta`` changed."""
    op = {"operatorId": 0, "operatorName": "stateStoreSave", "stateStoreName": "default", "numPartitions": 2,
          "minBatchId": 0, "maxBatchId": 4, **meta}  # fmt: skip
    return SparkStateView((op,), (StoreView(0, "default", 7, {0: 4, 1: 3}),))


def test_a_view_that_matches_the_files_agrees_on_every_fact(model: Any) -> None:
    check = cross_check(view(), model)
    assert check.disagree == () and check.skipped is None
    assert len(check.agree) == 6, check.agree  # name, partitions, newest batch, newest version, store, rows
    assert render_cross_check(check) == "cross-check with the inspector's reading of the files: 6 agree, 0 disagree"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"operatorName": "dedupe"}, "operator 0 name: Spark dedupe, metadata file stateStoreSave"),
        ({"numPartitions": 3}, "operator 0 partitions: Spark 3, files 2"),
        ({"maxBatchId": 3}, "operator 0 newest batch: Spark 3, commits/4"),
        ({"stateStoreName": "left-keyToNumValues"}, "operator 0 store left-keyToNumValues: on disk default"),
        ({"operatorId": 1}, "operator 1: Spark lists it, no state/1/ directory holds it"),
    ],
)
def test_each_wrong_fact_is_named(model: Any, change: dict[str, Any], named: str) -> None:
    check = cross_check(view(**change), model)
    assert named in check.disagree, check.disagree
    assert f"  DISAGREE {named}" in render_cross_check(check)


def test_rows_from_a_partition_without_state_files_disagree(model: Any) -> None:
    wrong = dataclasses.replace(view(), stores=(StoreView(0, "default", 9, {0: 4, 1: 3, 2: 2}),))
    (named,) = cross_check(wrong, model).disagree
    assert named == "operator 0 store default: Spark reads rows from partition(s) 0, 1, 2; no state files for 2"


def test_no_operator_from_spark_is_a_skip_with_the_reason(model: Any) -> None:
    failed = SparkStateView((), (), ("state-metadata: AnalysisException: no state",))
    check = cross_check(failed, model)
    assert check.skipped == "state-metadata: AnalysisException: no state" and not check.agree
    assert render_cross_check(check).endswith("skipped (state-metadata: AnalysisException: no state)")
