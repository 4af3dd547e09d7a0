"""A user's Python ``DataSource`` as a scenario's input (Spark-free parts): references checked when the scenario
is built, data fed through the context, the oracle's rows and each batch's rows read by a fresh reader, and
anomalies located by the source's own offsets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from examples.connectors._jsonl import line_count
from examples.pipelines import log_lines
from harness.inspector import read_batches
from harness.sources import PythonSource, SourceRun
from harness.sources.loading import LoadError
from harness.verdict.check import INPUT_BATCH_COLUMN, locate_by_input
from harness.verdict.checker import Anomaly, FaultRef
from scenarios import Scenario, SourceConfig
from tests.admission import needs_admission_control
from tests.unit.test_sources import _scenario as scenario_with

JSONL = "examples.connectors.jsonl_source:JsonlSource"
CONTEXT = "examples.connectors._jsonl:log_context"


def _scenario(source: PythonSource, **kw: Any) -> Scenario:
    return scenario_with(source=source, **kw)


def _run(input_dir: Path, checkpoint: Path) -> SourceRun:
    return SourceRun(SourceConfig(), "", str(input_dir), str(checkpoint), "", None, False)


def _checkpoint(root: Path, ends: list[dict[str, int]], committed: int) -> Path:
    """Batch i logs source offset ``ends[i]`` (the JSON-lines source's ``{"0": n0, "1": n1}``)."""
    ckpt = root / "ckpt"
    for d in ("offsets", "commits"):
        (ckpt / d).mkdir(parents=True)
    (ckpt / "metadata").write_text('{"id":"q"}')
    meta = {"batchWatermarkMs": 0, "batchTimestampMs": 0, "conf": {}}
    for bid, end in enumerate(ends):
        (ckpt / "offsets" / str(bid)).write_text(f"v1\n{json.dumps(meta)}\n{json.dumps(end)}")
        if bid < committed:
            (ckpt / "commits" / str(bid)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    return ckpt


def test_references_are_checked_when_the_scenario_is_built(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match=r"PythonSource source 'nope': expected 'path/to/module.py:Name'"):
        PythonSource("nope")
    with pytest.raises(LoadError, match=r"PythonSource context .*missing.py.* does not exist"):
        PythonSource(JSONL, str(tmp_path / "missing.py") + ":ctx")
    with pytest.raises(LoadError, match=r"is .*function.*not a pyspark.sql.datasource.DataSource"):
        PythonSource(CONTEXT).source_class()


def test_a_scenario_over_a_python_source_must_name_its_own_identity() -> None:
    with pytest.raises(ValueError, match=r"adds no provenance columns.*give identity="):
        _scenario(PythonSource(JSONL, CONTEXT))
    sc = _scenario(PythonSource(JSONL, CONTEXT), identity=("partition", "line"))
    assert sc.batch_limit is None  # one batch per run of the query: the source's admission control is its own
    with pytest.raises(ValueError, match=r"\['source.read'\] cannot fire with Python DataSource"):
        _scenario(PythonSource(JSONL, CONTEXT), identity=("line",), kill_points=("source.read",))
    assert log_lines.SCENARIO.kill_only_points == {"after_offsets_logged", "after_commit_logged"}


def test_data_is_fed_through_the_context_and_read_with_its_options(tmp_path: Path) -> None:
    src = PythonSource(JSONL, CONTEXT, options=(("partitions", "2"), ("max_rows_per_batch", "7")))
    assert src.feed(tmp_path, {0: 5, 1: 4}, rows_per_offset=2) == {"source_rows": 18}
    assert [line_count(tmp_path / "log", p) for p in (0, 1)] == [9, 9]
    opts = src.reader_options(tmp_path)
    assert opts == {"path": str(tmp_path / "log"), "partitions": "2", "max_rows_per_batch": "7"}
    no_context = PythonSource(JSONL).feed(tmp_path, {0: 5}, 1)
    assert no_context["source_rows"] == 0 and "arrives by itself" in no_context["note"]


@needs_admission_control
def test_each_batch_is_read_again_by_its_own_offsets(tmp_path: Path) -> None:
    src = PythonSource(JSONL, CONTEXT)
    src.feed(tmp_path / "in", {0: 4, 1: 4}, 1)
    ckpt = _checkpoint(tmp_path, [{"0": 2, "1": 1}, {"0": 4, "1": 4}], committed=2)
    table = src.input_batches(_run(tmp_path / "in", ckpt), ("partition", "line", "nope"))
    assert table is not None and table.column_names == ["partition", "line", INPUT_BATCH_COLUMN]
    got = sorted(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True))
    assert got == sorted(
        [(0, 0, 0), (0, 1, 0), (1, 0, 0)] + [(0, n, 1) for n in (2, 3)] + [(1, n, 1) for n in (1, 2, 3)]
    )
    assert src.input_batches(_run(tmp_path / "in", ckpt), ("nope",)) is None


def _anomaly(row: dict[str, Any]) -> Anomaly:
    return Anomaly("duplicate", None, None, None, None, 1, 2, row)


def test_an_anomaly_is_located_in_the_one_batch_that_read_its_row(tmp_path: Path) -> None:
    ckpt = _checkpoint(tmp_path, [{"0": 2}, {"0": 5}], committed=2)
    table = pa.table({"line": [0, 1, 2, 3, 4, 7, 7], INPUT_BATCH_COLUMN: [0, 0, 1, 1, 1, 0, 1]})
    faults = [FaultRef(3, 0, "after_offsets_logged", "k1"), FaultRef(9, 1, "sink.commit.after", "k2")]
    located = locate_by_input(
        [_anomaly({"line": 3, "v": 1}), _anomaly({"line": 7}), _anomaly({"line": 99})],
        table,
        read_batches(ckpt),
        faults,
    )
    assert located[0].batch_id == 1 and located[0].offset_range == {"source": ['{"0": 2}', '{"0": 5}']}
    assert located[0].fault is not None and located[0].fault.history_index == 9
    assert located[1].batch_id is None  # read by two batches: no one batch explains it
    first = locate_by_input([_anomaly({"line": 0})], table, read_batches(ckpt), faults)[0]
    assert first.batch_id == 0 and first.offset_range == {"source": ["initialOffset()", '{"0": 2}']}
    assert located[2].batch_id is None  # no batch read it


def test_timestamp_identities_are_located_and_an_uncommitted_batch_is_named(tmp_path: Path) -> None:
    import datetime as dt

    from harness.verdict.checker import _norm

    ckpt = _checkpoint(tmp_path, [{"0": 2}, {"0": 5}], committed=1)  # batch 1 planned, never committed
    t = [dt.datetime(2024, 1, 1, 0, 0, s) for s in range(5)]
    table = pa.table({"ts": t, INPUT_BATCH_COLUMN: [0, 0, 1, 1, 1]})
    row = {"ts": _norm(t[3])}  # as the checker hands rows over: timestamps as text
    (dup, visible) = locate_by_input([_anomaly(row)], table, read_batches(ckpt), [])
    assert (dup.kind, dup.batch_id) == ("duplicate", 1) and (visible.kind, visible.batch_id) == (
        "uncommitted-visible",
        1,
    )
