"""Source conformance checks without Spark: the reference source and the good
example sources pass; every deliberately broken example fails the check meant
for it; the offset helpers and loader behave as documented."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.datasource import DataSource, DataSourceStreamReader

from tests.admission import require_admission_control

require_admission_control()

from examples.connectors import (
    available_now_past_target,
    counter_available_now,
    empty_read_between,
    hash_ordered_offsets,
    jsonl_source,
    latest_offset_from_zero,
    overlapping_partitions,
    unseeded_data,
)
from examples.connectors._jsonl import log_context
from harness.conformance.results import ConformanceReport
from harness.conformance.source.offsets import json_problems, regressions
from harness.conformance.source.suite import check_source
from harness.sources.contexts import replayable_context
from harness.sources.loading import LoadError, parse_options, resolve
from scenarios.replayable_source import ReplayableDataSource

ROOT = Path(__file__).resolve().parents[2]


def run(cls: type[Any], ctx: Any, tmp_path: Path, **kw: Any) -> ConformanceReport:
    return check_source(cls, {}, ctx, workdir=tmp_path, end_to_end=False, echo=lambda m: None, **kw)


def statuses(report: ConformanceReport) -> dict[str, str]:
    return {c.id: c.status for c in report.checks}


def test_reference_source_passes_every_pure_check(tmp_path: Path) -> None:
    report = run(ReplayableDataSource, replayable_context, tmp_path)
    st = statuses(report)
    assert [c for c, s in st.items() if s == "fail"] == [], report.render_text()
    assert st["admission-control"] == "pass"  # the reference context sets max_rows_per_batch
    assert st["read-between-offsets"] == "skip" and st["end-to-end"] == "skip"
    assert report.exit_code == 0
    assert "60 rows" in report.by_id("read-cross-process").summary


@pytest.mark.parametrize("cls", [jsonl_source.JsonlSource, jsonl_source.JsonlSimpleSource])
def test_good_example_sources_pass(cls: type[Any], tmp_path: Path) -> None:
    report = run(cls, log_context, tmp_path)
    assert report.failed == [], report.render_text()
    if cls is jsonl_source.JsonlSimpleSource:
        assert statuses(report)["read-between-offsets"] == "pass"


BROKEN = [
    (overlapping_partitions.OverlappingPartitionsSource, log_context, "ranges-contiguous", "duplicate"),
    (unseeded_data.UnseededDataSource, log_context, "read-repeatable", "replay-divergent"),
    (unseeded_data.UnseededDataSource, log_context, "read-cross-process", "replay-divergent"),
    (latest_offset_from_zero.RestartsFromZeroSource, log_context, "latest-offset-monotonic", None),
    (empty_read_between.EmptyReadBetweenSource, log_context, "read-between-offsets", "lost"),
    (hash_ordered_offsets.HashOrderedOffsetsSource, hash_ordered_offsets.six_shard_context, "offsets-canonical", None),
    (available_now_past_target.PastTargetSource, log_context, "available-now-target", None),
]


@pytest.mark.parametrize(("cls", "ctx", "check", "kind"), BROKEN, ids=[f"{b[0].__name__}-{b[2]}" for b in BROKEN])
def test_broken_example_fails_its_check(cls: type[Any], ctx: Any, check: str, kind: str | None, tmp_path: Path) -> None:
    report = run(cls, ctx, tmp_path)
    result = report.by_id(check)
    assert result.status == "fail", report.render_text()
    assert result.fix and result.details
    if kind:
        assert kind in result.observed
    assert report.exit_code == 1
    assert check in report.summary_line()
    # The module docstring names the check that must catch it.
    assert check in (sys.modules[cls.__module__].__doc__ or "")


def test_broken_examples_fail_nothing_unrelated(tmp_path: Path) -> None:
    """The offset checks stay green for sources whose bug is in reading."""
    st = statuses(run(overlapping_partitions.OverlappingPartitionsSource, log_context, tmp_path))
    assert st["offsets-json"] == st["latest-offset-monotonic"] == st["read-repeatable"] == "pass"


class _Raising(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = options

    def initialOffset(self) -> dict[str, int]:
        return {"o": 0}

    def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
        raise ConnectionError("broker unreachable")

    def read(self, partition: Any) -> Any:
        return iter([])


class RaisingSource(DataSource):
    def schema(self) -> str:
        return "x INT"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _Raising(self.options)


def test_a_raising_source_fails_with_the_step_named(tmp_path: Path) -> None:
    report = run(RaisingSource, None, tmp_path, skip=("read-cross-process",))
    result = report.by_id("latest-offset-monotonic")
    assert result.status == "fail"
    assert "ConnectionError: broker unreachable" in result.summary
    assert report.by_id("read-cross-process").status == "skip"


def test_unknown_skip_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown check id"):
        run(ReplayableDataSource, replayable_context, tmp_path, skip=("no-such-check",))


@pytest.mark.parametrize(
    ("offset", "fragment"),
    [
        ((1, 2), "not a dict"),
        ({"a": (1, 2)}, "tuple"),
        ({1: 5}, "non-string key"),
        ({"a": float("nan")}, "not valid JSON"),
        ({"a": {1, 2}}, "not a JSON type"),
    ],
)
def test_json_problems(offset: Any, fragment: str) -> None:
    assert any(fragment in p for p in json_problems(offset))


def test_valid_offsets_and_regressions() -> None:
    assert json_problems({"a": [1, {"b": None}], "c": "x", "d": True}) == []
    assert regressions({"0": 10, "1": 5}, {"0": 3, "1": 5}) == ["0: 10 -> 3"]
    assert regressions({"0": 10}, {"0": 11}) == []
    assert regressions({"p": {"x": 4}}, {"p": {"x": 4}, "q": 1}) == []


def test_resolve_and_options() -> None:
    ref = resolve(str(ROOT / "examples/connectors/overlapping_partitions.py") + ":OverlappingPartitionsSource")
    assert (ref.module, ref.root) == ("examples.connectors.overlapping_partitions", str(ROOT))
    assert resolve("pkg.mod:Cls").module == "pkg.mod"
    with pytest.raises(LoadError, match="does not exist"):
        resolve("nowhere/x.py:Cls")
    with pytest.raises(LoadError, match="expected"):
        resolve("no_colon")
    assert parse_options(["a=1", "b=x=y"]) == {"a": "1", "b": "x=y"}
    with pytest.raises(LoadError, match="key=value"):
        parse_options(["novalue"])


def test_available_now_target_passes_correct_sources_and_skips_those_without_it(tmp_path: Path) -> None:
    """The reference source, the JSONL example (with a context) and a per-call counter (data arriving by itself,
    no context) keep to their availableNow target; a source without SupportsTriggerAvailableNow is skipped."""
    for cls, ctx in (
        (ReplayableDataSource, replayable_context),
        (jsonl_source.JsonlSource, log_context),
        (counter_available_now.CounterAvailableNowSource, None),
    ):
        result = run(cls, ctx, tmp_path / cls.__name__).by_id("available-now-target")
        assert result.status == "pass" and "stayed there" in result.summary, (cls, result.summary)
    skipped = run(jsonl_source.JsonlSimpleSource, log_context, tmp_path / "simple").by_id("available-now-target")
    assert skipped.status == "skip" and "Trigger.Once" in skipped.summary


class _EarlyTargetReader(jsonl_source.JsonlStreamReader):
    def prepareForTriggerAvailableNow(self) -> None:
        self.target = {int(p): 0 for p in self.initialOffset()}  # BUG: the start, not the data available


class EarlyTargetSource(jsonl_source.JsonlSource):
    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _EarlyTargetReader(self.options)


def test_available_now_target_fails_a_job_that_ends_before_the_data_it_had(tmp_path: Path) -> None:
    result = run(EarlyTargetSource, log_context, tmp_path).by_id("available-now-target")
    assert result.status == "fail" and any("was available when it started" in d for d in result.details), result
