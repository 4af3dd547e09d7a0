"""The Delta version naming finds the sink's table anywhere under the run's output, or says in
every anomaly why it names no version (no table, several) instead of losing the naming silently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fault_injectors.crash import FaultSite
from harness.verdict.checker import Anomaly
from harness.verdict.sink_versions import name_versions, write_versions
from scenarios.base import SinkContext
from scenarios.delta.locate import delta_versions, delta_versions_at, locate_table
from scenarios.delta.sinks import delta_tables

IDENTITY = ("partition", "offset", "seq")


def _table(path: Path, commits: int = 1) -> Path:
    log = path / "_delta_log"
    log.mkdir(parents=True)
    for version in range(commits):
        (log / f"{version:020d}.json").write_text("{}\n")
    (path / "part-0.parquet").write_bytes(b"")
    return path


def _ctx(output: Path) -> SinkContext:
    site = FaultSite(str(output.parent), "")
    return SinkContext(str(output), str(output.parent / "checkpoint"), site)


def test_a_table_is_found_at_the_output_itself_or_anywhere_under_it(tmp_path: Path) -> None:
    assert locate_table(_table(tmp_path / "a")) == (tmp_path / "a").resolve()
    _table(tmp_path / "b" / "deep" / "events")
    (tmp_path / "b" / "deep" / "events" / "year=2024").mkdir()
    _table(tmp_path / "b" / "deep" / "events" / "year=2024" / "in")  # in a table: not searched
    assert locate_table(tmp_path / "b") == (tmp_path / "b" / "deep" / "events").resolve()
    _table(tmp_path / "c" / "table", commits=0)  # a log without a commit is no table yet
    assert delta_tables(tmp_path / "c") == []


def test_none_or_several_tables_are_named_as_the_reason(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    none = f"no Delta table (a _delta_log with a commit) at or under {tmp_path / 'empty'}"
    assert locate_table(tmp_path / "empty") == none
    _table(tmp_path / "two" / "x")
    _table(tmp_path / "two" / "y")
    assert locate_table(tmp_path / "two") == f"2 Delta tables under {tmp_path / 'two'} (x, y)"


def _named(tmp_path: Path, hook: Any, output: Path) -> str | None:
    found = hook(None, _ctx(output), IDENTITY)  # no Spark: no table was read
    oracle = tmp_path / "oracle"
    oracle.mkdir(exist_ok=True)
    write_versions(oracle, found.label, found.rows, found.batches)
    row = {"partition": 0, "offset": 4, "seq": 0, "v": 1}
    anomaly = Anomaly("duplicate", 1, 0, 4, 0, 1, 2, row)
    (named,) = name_versions([anomaly], oracle, IDENTITY)
    return named.sink_where


def test_every_anomaly_says_why_no_version_is_named(tmp_path: Path) -> None:
    _table(tmp_path / "out" / "one")
    _table(tmp_path / "out" / "two")
    where = _named(tmp_path, delta_versions, tmp_path / "out")
    several = f"Delta table not located (2 Delta tables under {tmp_path / 'out'} (one, two); name"
    assert where is not None and where.startswith(several)
    assert "sink_versions=delta_versions_at(PATH)" in where
    (tmp_path / "nothing").mkdir()
    assert "no Delta table" in str(_named(tmp_path, delta_versions, tmp_path / "nothing"))


def test_a_table_you_name_elsewhere_is_checked_too(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    missing = tmp_path / "elsewhere"
    where = _named(tmp_path, delta_versions_at(str(missing)), tmp_path / "out")
    assert where is not None and f"(a _delta_log with a commit) at {missing}" in where
    by_ctx = delta_versions_at(lambda ctx: str(Path(ctx.output) / "nope"))
    assert f"at {tmp_path / 'out' / 'nope'}" in str(_named(tmp_path, by_ctx, tmp_path / "out"))


@pytest.mark.parametrize("layout", ["table", "", "nested/events"])
def test_the_table_is_located_where_the_sink_wrote_it(tmp_path: Path, layout: str) -> None:
    output = tmp_path / "output"
    _table(output / layout if layout else output)
    assert locate_table(output) == (output / layout if layout else output).resolve()
