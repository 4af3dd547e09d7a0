"""The DStream checkpoint reader (no JVM): LZ4 block framing, batch times, deleted and torn files."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from harness.inspector.dstream import dstream_json, inspect_dstream, is_dstream_checkpoint, lz4_problem, render_dstream

pytestmark = pytest.mark.unit


def _block(payload: bytes, token: int = 0x15) -> bytes:
    return b"LZ4Block" + bytes([token]) + struct.pack("<iii", len(payload), len(payload), 0) + payload


def stream(*payloads: bytes) -> bytes:
    """An LZ4 block stream as lz4-java writes it: raw blocks, then the end-of-stream block."""
    return b"".join(_block(p) for p in payloads) + _block(b"")


def test_lz4_framing_accepts_a_whole_stream_and_names_a_torn_one() -> None:
    whole = stream(b"x" * 100, b"y" * 7)
    assert lz4_problem(whole) is None
    assert "ends inside a block" in (lz4_problem(whole[:50]) or "")
    assert "no end-of-stream block" in (lz4_problem(stream(b"x" * 100)[:-21]) or "")
    assert "no LZ4Block magic" in (lz4_problem(b"garbage" * 5) or "")
    assert "after the end-of-stream block" in (lz4_problem(whole + b"\x00") or "")


def _checkpoint(root: Path, times: list[int], backups: bool = True) -> Path:
    root.mkdir(parents=True)
    for t in times:
        (root / f"checkpoint-{t}").write_bytes(stream(f"graph at {t}".encode()))
        if backups:
            (root / f"checkpoint-{t}.bk").write_bytes(stream(f"graph at {t} (first write)".encode()))
    (root / "0b1c2d3e-0000-4000-8000-000000000001" / "rdd-12").mkdir(parents=True)
    return root


def test_a_whole_checkpoint_lists_its_batch_times(tmp_path: Path) -> None:
    ck = _checkpoint(tmp_path / "ck", [1000, 2000, 3000, 4000, 5000])
    assert is_dstream_checkpoint(ck) and not is_dstream_checkpoint(tmp_path)
    report = inspect_dstream(ck)
    assert report.exit_code == 0 and report.times == [1000, 2000, 3000, 4000, 5000] and report.interval_ms == 1000
    assert report.rdd_dirs == {"0b1c2d3e-0000-4000-8000-000000000001": ["rdd-12"]}
    assert render_dstream(report).startswith("DStream checkpoint OK") and dstream_json(report)["ok"]


@pytest.mark.parametrize(
    ("damage", "finding"),
    [
        (lambda ck: (ck / "checkpoint-3000").unlink(), "dstream-missing"),
        (lambda ck: (ck / "checkpoint-5000").write_bytes(stream(b"z" * 64)[:40]), "dstream-truncated"),
    ],
)
def test_a_deleted_or_torn_file_is_named(tmp_path: Path, damage: object, finding: str) -> None:
    ck = _checkpoint(tmp_path / "ck", [1000, 2000, 3000, 4000, 5000])
    damage(ck)  # type: ignore[operator]
    report = inspect_dstream(ck)
    assert [f.id for f in report.violations] == [finding] and report.exit_code == 1
    assert render_dstream(report).startswith("DStream checkpoint INCONSISTENT: 1 violation(s)")


def test_a_missing_batch_time_is_a_note_not_a_violation(tmp_path: Path) -> None:
    """A restarted context runs the batches of its downtime without checkpointing them one by one (measured on a
    killed run): a gap of whole batch times is that, or deleted files; one note per run of missing times."""
    ck = _checkpoint(tmp_path / "ck", [1000, 2000, 3000, 4000, 5000, 6000])
    for t in (3000, 4000):
        for suffix in ("", ".bk"):
            (ck / f"checkpoint-{t}{suffix}").unlink()
    report = inspect_dstream(ck)
    assert report.exit_code == 0 and [(f.id, f.severity) for f in report.findings] == [("dstream-gap", "note")]
    assert "3000..4000 (2 times)" in report.findings[0].message


def test_the_oldest_and_newest_times_may_lack_half_their_pair(tmp_path: Path) -> None:
    """Spark's cleanup keeps 10 files (the oldest time may keep one of two); the newest may lack its backup."""
    ck = _checkpoint(tmp_path / "ck", [1000, 2000, 3000])
    (ck / "checkpoint-1000").unlink()
    (ck / "checkpoint-3000.bk").unlink()
    assert inspect_dstream(ck).exit_code == 0


#: Real files PySpark 4.2.0 wrote (textFileStream -> updateStateByKey -> foreachRDD, 1-s batches, lz4).
REAL = Path(__file__).parent / "fixtures" / "dstream"


def test_real_checkpoint_files_decode_to_their_input_files(tmp_path: Path) -> None:
    ck = tmp_path / "ck"
    ck.mkdir()
    for f in REAL.iterdir():
        (ck / f.name).write_bytes(f.read_bytes())
    report = inspect_dstream(ck)
    assert report.exit_code == 0 and report.times == [1795714589000, 1795714590000, 1795714591000]
    # The file stream remembers each batch's new file (the graph also names the directory it was written in).
    inputs = [[u for u in f.inputs if "/in/" in u] for f in report.files if not f.backup]
    assert [len(i) for i in inputs] == [4, 5, 6]
    assert all(u.startswith("file:/tmp/dsx/in/f") and u.endswith(".txt") for u in inputs[-1])
    assert "new: f5-1795714590833851329.txt" in render_dstream(report)
    (ck / "checkpoint-1795714590000").unlink()
    data = (ck / "checkpoint-1795714591000").read_bytes()
    (ck / "checkpoint-1795714591000").write_bytes(data[: len(data) // 3])
    assert sorted(f.id for f in inspect_dstream(ck).violations) == ["dstream-missing", "dstream-truncated"]


def test_another_codec_is_a_note_not_a_violation(tmp_path: Path) -> None:
    ck = _checkpoint(tmp_path / "ck", [1000, 2000])
    (ck / "checkpoint-2000").write_bytes(b"\x28\xb5\x2f\xfd" + b"zstd frame")  # zstd's magic
    report = inspect_dstream(ck)
    assert report.exit_code == 0 and [f.id for f in report.findings] == ["dstream-codec"]
