"""Invariant checks on synthetic checkpoints in PySpark 4.3's exact v1 shape.

Each test damages one thing (rewriting checksums where the damage is not about
them) and asserts the *exact* set of violation ids plus the file each names.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from harness.inspector import INVARIANTS, Finding, InspectionReport, inspect_checkpoint, summarize
from harness.inspector.synth import SPARK_43_CONF, commit_text, offsets_text, synth_checkpoint, write_with_crc


def _violations(report: InspectionReport) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in report.violations:
        out.setdefault(f.id, []).append(f.path)
    return out


@pytest.fixture
def ck(tmp_path: Path) -> Path:
    return synth_checkpoint(tmp_path / "ck", 6, stateful=True, watermark_step_ms=1000)


def test_clean_checkpoint_holds_every_invariant(ck: Path) -> None:
    report = inspect_checkpoint(ck)
    assert report.ok and report.exit_code == 0 and report.findings == ()
    assert [r.batch_id for r in report.timeline] == list(range(6))
    row = report.timeline[2]
    assert (row.status, row.watermark_ms, row.next_watermark_ms) == ("committed", 2000, 3000)
    assert (row.sources[0].start, row.sources[0].end) == ({"0": 20, "1": 20}, {"0": 30, "1": 30})
    assert [(c.operator_id, c.version, c.stores_with_version, c.stores) for c in row.state] == [(0, 3, 2, 2)]
    assert report.headline().startswith("checkpoint OK: query 00000000-0000-0000-0000-000000000006, 6 planned")


def test_missing_commit_in_the_middle(ck: Path) -> None:
    (ck / "commits" / "2").unlink()
    (ck / "commits" / ".2.crc").unlink()
    report = inspect_checkpoint(ck)
    assert _violations(report) == {"commits-gap": [str(ck / "commits" / "2")]}
    assert "silently skips re-running batch 2" in report.violations[0].message


def test_missing_first_commits_are_a_gap_too(ck: Path) -> None:
    for bid in (0, 1):
        (ck / "commits" / str(bid)).unlink()
    report = inspect_checkpoint(ck)
    assert _violations(report) == {"commits-gap": [str(ck / "commits" / "0"), str(ck / "commits" / "1")]}


def test_last_batch_uncommitted_is_a_note_but_earlier_ones_are_violations(tmp_path: Path) -> None:
    one = inspect_checkpoint(synth_checkpoint(tmp_path / "a", 4, committed=3))
    assert one.ok and [(f.id, f.batch_id) for f in one.notes] == [("last-batch-uncommitted", 3)]
    assert "re-runs it on restart" in one.notes[0].message
    two = inspect_checkpoint(synth_checkpoint(tmp_path / "b", 4, committed=2))
    assert _violations(two) == {"uncommitted-not-last": [str(tmp_path / "b" / "offsets" / "2")]}
    assert [f.id for f in two.notes] == ["last-batch-uncommitted"]


def test_offsets_gap_and_commit_without_offsets(ck: Path) -> None:
    for name in ("3", ".3.crc"):
        (ck / "offsets" / name).unlink()
    report = inspect_checkpoint(ck)
    assert _violations(report) == {
        "offsets-gap": [str(ck / "offsets")],
        "commit-without-offsets": [str(ck / "commits" / "3")],
    }


def test_missing_metadata(ck: Path) -> None:
    (ck / "metadata").unlink()
    report = inspect_checkpoint(ck)
    assert _violations(report) == {"metadata-missing": [str(ck / "metadata")]}
    assert [f.id for f in report.notes] == ["crc-orphan"]  # the .metadata.crc left behind


@pytest.mark.parametrize(
    ("content", "fid"),
    [
        (b"", "log-corrupt"),
        (b'v1\n{"batchWatermarkMs":0,"batchTimestampMs":17953', "log-corrupt"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "log-corrupt"),
        (b"v7\n{}", "log-version"),
        (b"version 1\n{}", "log-version"),
    ],
)
def test_damaged_offsets_file_is_named(ck: Path, content: bytes, fid: str) -> None:
    write_with_crc(ck / "offsets" / "4", content)
    report = inspect_checkpoint(ck)
    assert _violations(report) == {fid: [str(ck / "offsets" / "4")]}
    assert report.exit_code == 1


def test_stale_crc(ck: Path) -> None:
    path = ck / "offsets" / "2"
    path.write_text(path.read_text().replace('{"0": 30, "1": 30}', '{"0": 31, "1": 30}'))
    report = inspect_checkpoint(ck)
    assert _violations(report) == {"crc-mismatch": [str(path)]}
    assert "Spark does not verify this checksum" in report.violations[0].message
    assert inspect_checkpoint(ck, verify_checksums=False).ok


def test_offset_regression_and_source_count_change(ck: Path) -> None:
    write_with_crc(ck / "offsets" / "3", offsets_text([{"0": 55, "1": 40}], 3000, 1795357150553))
    write_with_crc(ck / "offsets" / "5", offsets_text([{"0": 60, "1": 60}, None], 5000, 1795357151553))
    report = inspect_checkpoint(ck)
    assert _violations(report) == {
        "offset-regression": [str(ck / "offsets" / "4")],
        "source-count-changed": [str(ck / "offsets" / "5")],
    }
    assert "source 0 moves backwards from offsets/3 to offsets/4 (0 55 -> 50)" in report.violations[0].message


def test_kafka_offsets_are_named_by_topic_and_partition(ck: Path) -> None:
    # Spark's Kafka source logs {"topic": {"partition": offset}}; partition 1 regresses, partition 2 vanishes.
    for n, parts in ((3, {"0": 10, "1": 30, "2": 5}), (4, {"0": 12, "1": 20})):
        write_with_crc(ck / "offsets" / str(n), offsets_text([{"orders": parts}], 1000 * n, 1795357150553 + n))
    report = inspect_checkpoint(ck)
    found = _violations(report)
    assert found["offset-regression"] == [str(ck / "offsets" / "4")]
    assert found["kafka-partition-dropped"] == [str(ck / "offsets" / "4")]
    text = " ".join(v.message for v in report.violations)
    assert "topic orders partition 1 30 -> 20" in text
    assert "topic orders partition 2 is at 5 in offsets/3 and missing from offsets/4" in text


def test_watermark_regressions(ck: Path) -> None:
    write_with_crc(ck / "offsets" / "4", offsets_text([{"0": 50, "1": 50}], 1000, 1795357151053))
    write_with_crc(ck / "commits" / "1", commit_text(500))
    report = inspect_checkpoint(ck)
    paths = sorted(_violations(report)["watermark-regression"])
    assert set(_violations(report)) == {"watermark-regression"}
    assert paths == sorted([str(ck / "offsets" / "4"), str(ck / "commits" / "1"), str(ck / "offsets" / "4")])


def test_conf_change_is_reported_once(ck: Path) -> None:
    conf = {**SPARK_43_CONF, "spark.sql.shuffle.partitions": "200"}
    for bid in (4, 5):
        write_with_crc(
            ck / "offsets" / str(bid),
            offsets_text([{"0": 10 * (bid + 1), "1": 10 * (bid + 1)}], bid * 1000, 1795357151053, conf),
        )
    report = inspect_checkpoint(ck)
    assert _violations(report) == {"conf-changed": [str(ck / "offsets" / "4")]}
    assert "spark.sql.shuffle.partitions is '2' in offsets/3 but '200' in offsets/4" in report.violations[0].message


def test_state_gaps_partitions_and_ahead(ck: Path) -> None:
    for name in ("4.delta", ".4.delta.crc"):
        (ck / "state" / "0" / "0" / name).unlink()
    write_with_crc(ck / "state" / "0" / "1" / "9.delta", b"LZ4Block")
    report = inspect_checkpoint(ck)
    assert _violations(report) == {
        "state-version-missing": [str(ck / "state" / "0" / "0")],
        "state-ahead": [str(ck / "state" / "0" / "1")],
    }
    assert "version 4 is missing" in report.violations[0].message
    shutil.rmtree(ck / "state" / "0" / "1")
    assert set(_violations(inspect_checkpoint(ck))) == {"state-version-missing", "state-partitions-mismatch"}


def test_snapshot_makes_older_deltas_unnecessary(ck: Path) -> None:
    write_with_crc(ck / "state" / "0" / "0" / "4.snapshot", b"LZ4Block")
    for v in (1, 2, 3):
        for name in (f"{v}.delta", f".{v}.delta.crc"):
            (ck / "state" / "0" / "0" / name).unlink()
    assert inspect_checkpoint(ck).ok


def test_state_unique_ids_of_checkpoint_v2(ck: Path) -> None:
    write_with_crc(ck / "state" / "0" / "0" / "6_aaaa-1.zip", b"PK")
    ids = {"nextBatchWatermarkMs": 6000, "stateUniqueIds": {"0": [["aaaa-1"], ["bbbb-2"]]}}
    write_with_crc(ck / "commits" / "5", "v2\n" + json.dumps(ids))
    report = inspect_checkpoint(ck)
    assert _violations(report) == {"state-unique-id-missing": [str(ck / "state" / "0" / "1")]}
    assert "bbbb-2" in report.violations[0].message


def test_file_source_log_missing(tmp_path: Path) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 2)
    write_with_crc(ck / "offsets" / "1", offsets_text([{"logOffset": 1}], 0, 1795357150553))
    write_with_crc(ck / "offsets" / "0", offsets_text([{"logOffset": 0}], 0, 1795357150053))
    write_with_crc(ck / "sources" / "0" / "0", 'v1\n{"path":"file:///in/a.json","timestamp":1,"batchId":0}')
    report = inspect_checkpoint(ck)
    assert _violations(report) == {"source-log-missing": [str(ck / "sources" / "0" / "1")]}


def test_sink_checks(tmp_path: Path) -> None:
    out = tmp_path / "out"
    ck = synth_checkpoint(tmp_path / "ck", 12, sink_dir=out)
    report = inspect_checkpoint(ck, out)
    assert report.ok and [r.sink_files_added for r in report.timeline] == [2] * 12
    assert (out / "_spark_metadata" / "9.compact").exists()

    def part(batch: int, p: int) -> Path:  # the synthesizer's part-file names
        return out / f"part-{p:05d}-{uuid.UUID(int=batch * 1000 + p)}-c000.snappy.parquet"

    part(0, 0).unlink()
    part(1, 1).write_bytes(b"replaced")
    (out / "part-00000-orphan-c000.snappy.parquet").write_bytes(b"x")
    (out / "_spark_metadata" / "11").unlink()  # batch 11's two files become orphans too
    write_with_crc(out / "_spark_metadata" / "14", "v1")
    report = inspect_checkpoint(ck, out)
    assert _violations(report) == {
        "sink-file-missing": [str(out / "_spark_metadata" / "0")],
        "sink-file-size": [str(out / "_spark_metadata" / "1")],
        "sink-orphan-file": sorted(
            str(f) for f in (out / "part-00000-orphan-c000.snappy.parquet", part(11, 0), part(11, 1))
        ),
        "sink-batch-missing": [str(out / "_spark_metadata" / "11")],
        "sink-ahead": [str(out / "_spark_metadata" / "14")],
        "crc-mismatch": [str(part(1, 1))],
    }


def test_copied_sink_dir_is_foreign_not_orphaned(tmp_path: Path) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 3, sink_dir=tmp_path / "out")
    shutil.copytree(tmp_path / "out", tmp_path / "copy")
    report = inspect_checkpoint(ck, tmp_path / "copy")
    assert _violations(report) == {"sink-path-foreign": [str(tmp_path / "copy" / "_spark_metadata")]}


def test_notes_temp_files_purged_history_and_non_file_sink(tmp_path: Path) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 5)
    for bid in (0, 1):
        for log in ("offsets", "commits"):
            (ck / log / str(bid)).unlink()
            (ck / log / f".{bid}.crc").unlink()
    (ck / "offsets" / ".5.0c3c73ce-2704-4317-b955-9dae91d16313.tmp").write_text("v1")
    (tmp_path / "plain").mkdir()
    report = inspect_checkpoint(ck, tmp_path / "plain")
    assert report.ok
    assert sorted(f.id for f in report.notes) == ["logs-purged", "sink-not-file-sink", "temp-file"]
    assert report.timeline[0].sources[0].start_known is False


def test_every_invariant_id_is_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "inspector.md").read_text()
    missing = [fid for fid in INVARIANTS if f"`{fid}`" not in doc]
    assert missing == []
    with pytest.raises(ValueError, match="unknown invariant id"):
        Finding("no-such-check", "/x", "y")


def test_summarize_is_short_and_never_raises(ck: Path, tmp_path: Path) -> None:
    (ck / "commits" / "2").unlink()
    text = summarize(ck, tail=2)
    lines = text.splitlines()
    assert lines[0].startswith("checkpoint INCONSISTENT: 1 violation(s) (commits-gap)")
    assert lines[1] == "last 2 batch(es):"
    assert lines[2].split()[:2] == ["4", "committed"]
    assert lines[4].startswith(f"  [commits-gap] {ck / 'commits' / '2'}: ")
    assert summarize(tmp_path / "nope") == (
        f"checkpoint inspector: cannot read {tmp_path / 'nope'}: does not exist; give the directory passed as "
        "checkpointLocation"
    )


def test_corrupt_sink_and_source_logs_say_who_fails(tmp_path: Path) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 3, sink_dir=tmp_path / "out")
    write_with_crc(tmp_path / "out" / "_spark_metadata" / "1", b'v1\n{"path":"file:///x')
    write_with_crc(ck / "sources" / "0" / "0", b"v2\n{}")
    report = inspect_checkpoint(ck, tmp_path / "out")
    by_path = {f.path: f for f in report.violations}
    sink_log = by_path[str(tmp_path / "out" / "_spark_metadata" / "1")]
    assert sink_log.id == "log-corrupt" and "every reader of the sink directory fail" in sink_log.message
    source_log = by_path[str(ck / "sources" / "0" / "0")]
    assert source_log.id == "log-version" and "the file source fails" in source_log.message
    assert sorted(by_path) == sorted([sink_log.path, source_log.path])  # no orphan verdicts without the full log


def _delta_offset(version: int, index: int, starting: bool = False) -> dict[str, object]:
    return {"sourceVersion": 1, "reservoirId": "r-1", "reservoirVersion": version, "index": index,
            "isStartingVersion": starting}  # fmt: skip


def test_delta_source_offsets_compare_as_a_version_and_file_index(ck: Path) -> None:
    # Measured on Spark 4.2 + Delta 4.4: the index falls back to -1 whenever the version moves on (progress).
    for n, version, index, starting in ((2, 2, 0, True), (3, 3, -1, False), (4, 4, 2, False)):
        write_with_crc(ck / "offsets" / str(n), offsets_text([_delta_offset(version, index, starting)], 1000 * n, n))
    assert "offset-regression" not in _violations(inspect_checkpoint(ck))
    write_with_crc(ck / "offsets" / "5", offsets_text([_delta_offset(4, 1)], 5000, 5))
    report = inspect_checkpoint(ck)
    assert _violations(report)["offset-regression"] == [str(ck / "offsets" / "5")]
    assert "Delta position (reservoirVersion, index) (4, 2) -> (4, 1)" in report.violations[0].message
