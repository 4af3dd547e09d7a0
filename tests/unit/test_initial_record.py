"""The initial offset Spark used is recorded when Spark asks (no Spark): the recording subclass keeps the
user's name and reader kind, survives cloudpickle by value, and the oracle takes the last answer given
before the first commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark import cloudpickle
from pyspark.sql.datasource import CaseInsensitiveDict

from tests.admission import require_admission_control

require_admission_control()

from examples.connectors.jsonl_source import JsonlSimpleSource, JsonlSource
from harness.sources.initial import recorded_answers, recording_source, used_initial_offset

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("cls", [JsonlSource, JsonlSimpleSource])
def test_readers_record_every_initial_offset_with_the_commit_state(cls: type, tmp_path: Path) -> None:
    record, ckpt = tmp_path / "initial.jsonl", tmp_path / "ckpt"
    wrapped = cloudpickle.loads(cloudpickle.dumps(recording_source(cls, record, ckpt)))
    assert wrapped.name() == cls.name() and issubclass(wrapped, cls)
    ds = wrapped(CaseInsensitiveDict({"path": str(tmp_path / "logs")}))
    reader = ds.streamReader(ds.schema()) if cls is JsonlSource else ds.simpleStreamReader(ds.schema())
    first = reader.initialOffset()
    (ckpt / "commits").mkdir(parents=True)
    (ckpt / "commits" / "0").write_text("v1\n{}")
    reader.initialOffset()
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [e["committed"] for e in lines] == [False, True]
    assert used_initial_offset(record) == (True, first) and recorded_answers(record) == [first, first]


def test_the_last_answer_before_the_first_commit_is_the_one_batch_zero_used(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    assert used_initial_offset(record) == (False, None)
    entries = [({"t": 1}, False), ({"t": 5}, False), ({"t": 9}, True)]
    record.write_text("".join(json.dumps({"offset": o, "committed": c}) + "\n" for o, c in entries) + '{"offs')
    assert used_initial_offset(record) == (True, {"t": 5})  # a restart before commit 0 re-planned batch 0
    assert recorded_answers(record) == [{"t": 1}, {"t": 5}, {"t": 9}]  # the torn last line is skipped


def test_the_oracle_reads_one_range_unless_batch_zero_was_planned_inverted() -> None:
    from harness.sources.initial import oracle_spans

    a, e0, end = {"0": 0, "1": 0}, {"0": 15, "1": 15}, {"0": 30, "1": 30}
    # One range: a source whose batch boundaries overlap must not have its bug copied into the oracle.
    assert oracle_spans(a, e0, end) == [(a, end)]
    assert oracle_spans(e0, e0, end) == [(e0, end)]
    # A clock-driven start asked again after offsets/0 was computed lies past it: read as Spark did.
    later = {"tick": 120}
    assert oracle_spans(later, {"tick": 100}, {"tick": 180}) == [(later, {"tick": 100}), ({"tick": 100}, {"tick": 180})]
    assert oracle_spans(later, {"tick": 100}, {"tick": 100}) == [(later, {"tick": 100})]
