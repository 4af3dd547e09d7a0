"""upgrade-check's pure half (issue 29 point 3): the state schema reader and the answer, over the saved
checkpoints and probes of real runs (``tests/unit/fixtures/upgrade``: each a version 1 checkpoint, the probe of
the next version on it, and the verdict its upgrade run measured)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import struct
from pathlib import Path

import pytest

from harness.inspector.checkpoint import CheckpointError
from harness.inspector.state_schema import read_schema_file, read_state_schemas, same_but_names
from harness.upgrade.decide import decide
from harness.upgrade.probe import Probe, pending_batch

FIXTURES = Path(__file__).parent / "fixtures" / "upgrade"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
#: The measured verdict of an upgrade run -> the answer upgrade-check must give before that deploy.
AGREES = {"exactly-once": {"resumable"}, "upgrade-refused": {"refused"}, "violated": {"refused", "risk"}}


def test_every_saved_case_is_a_real_pairing() -> None:
    assert set(CASES) >= {"filter", "agg-key", "agg-function", "join-condition", "same-agg"}


@pytest.mark.parametrize("case", CASES)
def test_the_answer_agrees_with_what_the_upgrade_run_measured(case: str) -> None:
    measured = json.loads((FIXTURES / case / "measured.json").read_text())["verdict"]
    answer = decide(FIXTURES / case / "checkpoint", Probe.load(FIXTURES / case / "probe.json"))
    assert answer.answer in AGREES[measured], (case, measured, answer)
    assert all(f.rule is not None for f in answer.findings), answer
    if measured == "upgrade-refused":
        assert answer.error_class == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE" and answer.exit_code == 1


def test_each_answer_names_its_reason() -> None:
    function = decide(FIXTURES / "agg-function" / "checkpoint", Probe.load(FIXTURES / "agg-function" / "probe.json"))
    assert [(f.kind, f.rule.id if f.rule else None) for f in function.findings] == [("changed", "agg-functions")]
    assert "sum -> max" in function.findings[0].detail
    join = decide(FIXTURES / "join-condition" / "checkpoint", Probe.load(FIXTURES / "join-condition" / "probe.json"))
    assert [(f.kind, f.rule.id if f.rule else None) for f in join.findings] == [("risk", "join-condition")]
    assert join.exit_code == 2


def test_a_conf_the_checkpoint_overrides_is_a_risk_and_an_equal_one_is_not() -> None:
    probe = Probe.load(FIXTURES / "same-agg" / "probe.json")
    logged = json.loads((FIXTURES / "same-agg" / "checkpoint" / "offsets" / "5").read_text().splitlines()[1])["conf"]
    key = "spark.sql.shuffle.partitions"
    same = dataclasses.replace(probe, confs={key: logged[key]})
    assert decide(FIXTURES / "same-agg" / "checkpoint", same).answer == "resumable"
    other = dataclasses.replace(probe, confs={key: str(int(logged[key]) + 3)})
    answer = decide(FIXTURES / "same-agg" / "checkpoint", other)
    assert answer.answer == "risk" and answer.findings[0].rule is not None
    assert answer.findings[0].rule.id == "conf-shuffle-partitions" and "is ignored" in answer.findings[0].detail


def test_a_store_the_new_version_no_longer_writes_is_a_change(tmp_path: Path) -> None:
    probe = dataclasses.replace(Probe.load(FIXTURES / "same-agg" / "probe.json"), schemas={})
    answer = decide(FIXTURES / "same-agg" / "checkpoint", probe)
    assert answer.answer == "refused" and answer.findings[0].rule is not None
    assert answer.findings[0].rule.id == "stateful-add-remove"


def test_schemas_compare_by_type_as_spark_does() -> None:
    (old,) = read_state_schemas(FIXTURES / "same-agg" / "checkpoint")
    assert old.where == "0/0" and [f["name"] for f in old.value["fields"]] == ["count", "sum"]
    assert same_but_names(old.value, old.value) == []
    renamed = json.loads(json.dumps(old.value).replace('"sum"', '"max"'))
    assert same_but_names(old.value, renamed) == [("sum", "max")]
    retyped = json.loads(json.dumps(old.value).replace('"long"', '"double"'))
    assert same_but_names(old.value, retyped) is None
    assert len(read_state_schemas(FIXTURES / "join-condition" / "checkpoint")) == 4
    assert read_state_schemas(FIXTURES / "filter" / "checkpoint") == []


def test_a_damaged_schema_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "schema"
    good = (FIXTURES / "same-agg" / "checkpoint" / "state" / "0" / "0" / "_metadata" / "schema").read_bytes()
    path.write_bytes(good[:40])
    with pytest.raises(CheckpointError, match="truncated state schema file") as info:
        read_schema_file(path)
    assert str(path) in str(info.value)
    path.write_bytes(struct.pack(">H", 2) + b"v9")
    with pytest.raises(CheckpointError, match="'v9' is not v1 or v2"):
        read_schema_file(path)


def test_the_probe_replays_the_newest_batch_and_round_trips(tmp_path: Path) -> None:
    ckpt = tmp_path / "checkpoint"
    shutil.copytree(FIXTURES / "filter" / "checkpoint", ckpt)
    assert pending_batch(ckpt) == (3, False)  # offsets/3 without commits/3: pending already
    (ckpt / "commits").mkdir()
    (ckpt / "commits" / "3").write_text("v1\n{}\n")
    assert pending_batch(ckpt) == (3, True)
    probe = Probe.load(FIXTURES / "agg-key" / "probe.json")
    probe.save(tmp_path / "probe.json")
    assert Probe.load(tmp_path / "probe.json") == probe and not probe.accepted
