"""upgrade-check's pure half (issue 29 point 3): the state schema reader and the answer, over the saved
checkpoints and probes of real runs. ``tests/unit/fixtures/upgrade`` is what ``certify --upgrades
--save-fixtures`` wrote: per row of the guide's table, version 1's checkpoint files, the probe of version 2 on it
and the verdict the row's upgrade run measured."""

from __future__ import annotations

import dataclasses
import json
import shutil
import struct
from pathlib import Path

import pytest

from harness.conformance.certify.upgrades import CHECK_AGREES, UPGRADE_KEYS
from harness.inspector.checkpoint import CheckpointError
from harness.inspector.state_schema import read_schema_file, read_state_schemas, same_but_names
from harness.upgrade.decide import decide
from harness.upgrade.probe import Probe, pending_batch

FIXTURES = Path(__file__).parent / "fixtures" / "upgrade"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def test_every_row_of_certify_upgrades_has_its_saved_case() -> None:
    assert sorted(CASES) == sorted(k.split(":", 1)[1] for k in UPGRADE_KEYS)


@pytest.mark.parametrize("case", CASES)
def test_the_answer_agrees_with_what_the_upgrade_run_measured(case: str) -> None:
    measured = json.loads((FIXTURES / case / "measured.json").read_text())["verdict"]
    answer = decide(FIXTURES / case / "checkpoint", Probe.load(FIXTURES / case / "probe.json"))
    assert answer.answer in CHECK_AGREES[measured], (case, measured, answer)
    # Every finding names the guide's row, or says that none explains it (a source type replaced fails bare).
    assert all(f.rule is not None or "no rule of the guide explains" in f.detail for f in answer.findings), answer
    if measured == "upgrade-refused":
        assert answer.exit_code == 1 and answer.findings[0].kind == "refused"


def test_each_answer_names_its_reason() -> None:
    function = decide(FIXTURES / "agg-functions" / "checkpoint", Probe.load(FIXTURES / "agg-functions" / "probe.json"))
    assert [(f.kind, f.rule.id if f.rule else None) for f in function.findings] == [("changed", "agg-functions")]
    assert "sum -> max" in function.findings[0].detail
    join = decide(FIXTURES / "join-condition" / "checkpoint", Probe.load(FIXTURES / "join-condition" / "probe.json"))
    assert [(f.kind, f.rule.id if f.rule else None) for f in join.findings] == [("risk", "join-condition")]
    assert join.exit_code == 2


AGG = FIXTURES / "agg-functions" / "checkpoint"  # version 1: agg_watermark_append


def _unchanged(checkpoint: Path) -> Probe:
    """A probe of a version that wrote the old schemas field for field (version 1 itself)."""
    schemas = {s.where: {"key": s.key, "value": s.value} for s in read_state_schemas(checkpoint)}
    return Probe(pending_batch(checkpoint)[0], True, schemas=schemas)


def test_the_same_version_is_resumable_and_a_renamed_key_is_only_a_risk() -> None:
    assert decide(AGG, _unchanged(AGG)).answer == "resumable"
    probe = _unchanged(AGG)
    renamed = json.loads(json.dumps(probe.schemas).replace('"name": "key"', '"name": "account"'))
    answer = decide(AGG, dataclasses.replace(probe, schemas=renamed))
    assert answer.answer == "risk" and answer.findings[0].rule is not None
    assert answer.findings[0].rule.id == "agg-keys" and "key -> account" in answer.findings[0].detail


def test_a_conf_the_checkpoint_overrides_is_a_risk_and_an_equal_one_is_not() -> None:
    newest = pending_batch(AGG)[0]
    logged = json.loads((AGG / "offsets" / str(newest)).read_text().splitlines()[1])["conf"]
    key = "spark.sql.shuffle.partitions"
    same = dataclasses.replace(_unchanged(AGG), confs={key: logged[key]})
    assert decide(AGG, same).answer == "resumable"
    other = dataclasses.replace(_unchanged(AGG), confs={key: str(int(logged[key]) + 3)})
    answer = decide(AGG, other)
    assert answer.answer == "risk" and answer.findings[0].rule is not None
    assert answer.findings[0].rule.id == "conf-shuffle-partitions" and "is ignored" in answer.findings[0].detail


def test_a_store_the_new_version_no_longer_writes_or_reshapes_is_a_change() -> None:
    answer = decide(AGG, dataclasses.replace(_unchanged(AGG), schemas={}))
    assert answer.answer == "refused" and answer.findings[0].rule is not None
    assert answer.findings[0].rule.id == "stateful-add-remove"
    reshaped = json.loads(json.dumps(_unchanged(AGG).schemas).replace('"long"', '"double"'))
    answer = decide(AGG, dataclasses.replace(_unchanged(AGG), schemas=reshaped))
    assert answer.answer == "refused" and "changed shape and Spark resumed anyway" in answer.findings[0].detail


def test_no_answer_when_nothing_was_checked() -> None:
    never = Probe(3, False, "[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] ...", not_started=True)
    answer = decide(AGG, never)
    assert (answer.answer, answer.exit_code) == ("no-answer", 2) and "did not start" in answer.findings[0].detail
    lost = dataclasses.replace(_unchanged(AGG), schemas={}, schema_error="boom")
    assert decide(AGG, lost).answer == "no-answer"
    unexplained = Probe(3, False, "[KAFKA_DATA_LOSS.START_OFFSET_RESET] offsets were deleted")
    answer = decide(AGG, unexplained)
    assert answer.answer == "refused" and "no rule of the guide explains this error" in answer.findings[0].detail


def test_schemas_compare_by_type_as_spark_does() -> None:
    (old,) = read_state_schemas(AGG)
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
    good = (AGG / "state" / "0" / "0" / "_metadata" / "schema").read_bytes()
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
    assert pending_batch(ckpt) == (4, True)  # offsets/4 and commits/4: the probe removes the commit first
    (ckpt / "commits" / "4").unlink()
    assert pending_batch(ckpt) == (4, False)  # offsets/4 without commits/4: pending already
    probe = Probe.load(FIXTURES / "agg-keys" / "probe.json")
    probe.save(tmp_path / "probe.json")
    assert Probe.load(tmp_path / "probe.json") == probe and not probe.accepted


def test_a_moved_file_sink_is_not_resumable_and_the_same_one_is() -> None:
    """The sink-path row: version 2's file sink writes to a directory with no sink log, while the checkpoint
    committed batches: the new log would start past batch 0 (measured: every read fails). The filter row's sink
    is version 1's directory, its log at the checkpoint's newest batch."""
    moved = decide(FIXTURES / "sink-path" / "checkpoint", Probe.load(FIXTURES / "sink-path" / "probe.json"))
    assert moved.answer == "refused" and moved.exit_code == 1
    (finding,) = moved.findings
    assert finding.rule is not None and finding.rule.id == "sink-file-path"
    assert "output-moved, which holds no sink log" in finding.detail and "_spark_metadata/0 missing" in finding.detail
    same = Probe.load(FIXTURES / "filter" / "probe.json")
    assert same.sink is not None and same.sink["latest"] is not None
    assert decide(FIXTURES / "filter" / "checkpoint", same).answer == "resumable"
    behind = dataclasses.replace(same, sink={"path": "/data/out", "latest": 1})
    (late,) = decide(FIXTURES / "filter" / "checkpoint", behind).findings
    assert late.kind == "changed" and "whose log ends at batch 1" in late.detail
    unknown = dataclasses.replace(same, sink=None)
    assert decide(FIXTURES / "filter" / "checkpoint", unknown).answer == "resumable"


def test_a_scenario_names_its_file_sink_and_no_other_sink(tmp_path: Path) -> None:
    from harness.upgrade.pipeline import _file_sink_path
    from scenarios import get_scenario

    checkpoint = tmp_path / "run" / "checkpoint"
    moved = get_scenario("harness.conformance.certify.upgrade_pairs:V2_SINK_PATH")
    assert _file_sink_path(moved, checkpoint, tmp_path) == str(tmp_path / "run" / "output") + "-moved"
    assert _file_sink_path(get_scenario("file_sink_stateless"), checkpoint, tmp_path) == str(
        tmp_path / "run" / "output"
    )
    assert _file_sink_path(get_scenario("foreachbatch_sqlite_upsert"), checkpoint, tmp_path) is None
    assert _file_sink_path(get_scenario("kafka_sink"), checkpoint, tmp_path) is None


def test_a_source_evolution_probe_after_the_batch_flags_uncompared_state() -> None:
    """When the probe had to restart after the newest batch, a stateful checkpoint's schemas were not compared:
    a risk, not a clean answer."""
    probe = dataclasses.replace(Probe.load(FIXTURES / "agg-keys" / "probe.json"), accepted=True, message=None)
    answer = decide(FIXTURES / "agg-keys" / "checkpoint", dataclasses.replace(probe, after_batch=True, schemas={}))
    assert answer.answer == "risk" and "state schemas were not compared" in answer.findings[0].detail


def test_the_sink_log_is_read_from_a_local_path_or_uri_and_a_remote_one_needs_spark(tmp_path: Path) -> None:
    from harness.upgrade.probe import file_sink_facts

    (tmp_path / "out" / "_spark_metadata").mkdir(parents=True)
    for name in ("0", "9.compact", "10", ".10.crc"):
        (tmp_path / "out" / "_spark_metadata" / name).write_text("v1\n")
    assert file_sink_facts(str(tmp_path / "out")) == {"path": str(tmp_path / "out"), "latest": 10}
    assert file_sink_facts(f"file://{tmp_path}/out")["latest"] == 10  # type: ignore[index]
    assert file_sink_facts(str(tmp_path / "elsewhere")) == {"path": str(tmp_path / "elsewhere"), "latest": None}
    assert file_sink_facts(None) is None
    with pytest.raises(OSError, match="a remote sink path is read through Spark"):
        file_sink_facts("s3a://bucket/out")


def test_a_kafka_source_subscribed_to_other_topics_is_not_resumable_and_the_same_topics_are() -> None:
    """The topic row: the pending batch replays the logged offsets whatever the subscription (measured: Spark
    accepted it, then failed the next batch: the old topic's data 'may have been lost'). The subscription is in
    the probe's source descriptions; the old topics are the logged offsets' keys."""
    probe = Probe.load(FIXTURES / "topic" / "probe.json")
    ckpt = FIXTURES / "topic" / "checkpoint"
    (renamed,) = probe.sources
    old = renamed.removeprefix("KafkaV2[Subscribe[").removesuffix("-renamed]]")
    (finding,) = decide(ckpt, probe).findings
    assert finding.kind == "changed" and finding.rule is not None and finding.rule.id == "source-subscribed-topics"
    assert f"checkpoint's offsets are of topic(s) {old}" in finding.detail
    same = [
        f"KafkaV2[Subscribe[{old}]]",
        f"KafkaV2[Assign[[{old}-0, {old}-1]]]",
        "KafkaV2[SubscribePattern[harness-.*]]",
    ]
    for description in same:
        assert decide(ckpt, dataclasses.replace(probe, sources=[description])).answer == "resumable", description
    other = dataclasses.replace(probe, sources=["KafkaV2[SubscribePattern[orders-.*]]"])
    assert decide(ckpt, other).answer == "refused"
    assert decide(ckpt, dataclasses.replace(probe, sources=["MemoryStream[value#1]"])).answer == "resumable"
