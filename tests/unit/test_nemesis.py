from __future__ import annotations

from pathlib import Path

import pytest

from fault_injectors.nemesis import NEMESES, NemesisError, apply_nemesis
from harness.inspector import CheckpointError, batch_ids, read_commit, read_offsets

META = '{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{"spark.sql.shuffle.partitions":"2"}}'


def make_checkpoint(root: Path, batches: int = 4, committed: int = 4) -> Path:
    ckpt = root / "ckpt"
    (ckpt / "offsets").mkdir(parents=True)
    (ckpt / "commits").mkdir()
    (ckpt / "metadata").write_text('{"id":"q"}\n')
    for n in range(batches):
        (ckpt / "offsets" / str(n)).write_text(f'v1\n{META}\n{{"0": {20 * (n + 1)}, "1": {15 * (n + 1)}}}')
        (ckpt / "offsets" / f".{n}.crc").write_bytes(b"crc")
        if n < committed:
            (ckpt / "commits" / str(n)).write_text('v1\n{"nextBatchWatermarkMs":0}')
            (ckpt / "commits" / f".{n}.crc").write_bytes(b"crc")
    return ckpt


def test_truncate_empty_garbage_make_the_latest_offsets_unreadable(tmp_path: Path) -> None:
    for i, name in enumerate(("truncate_latest_offsets", "empty_latest_offsets", "garbage_latest_offsets")):
        ckpt = make_checkpoint(tmp_path / str(i))
        assert "offsets/3" in apply_nemesis(name, ckpt)
        with pytest.raises(CheckpointError, match="offsets/3"):
            read_offsets(ckpt, 3)
        assert read_offsets(ckpt, 2).sources == ({"0": 60, "1": 45},)


def test_commit_damage(tmp_path: Path) -> None:
    ckpt = make_checkpoint(tmp_path / "a")
    apply_nemesis("empty_latest_commit", ckpt)
    with pytest.raises(CheckpointError, match="empty"):
        read_commit(ckpt, 3)
    ckpt = make_checkpoint(tmp_path / "b")
    apply_nemesis("delete_latest_commit", ckpt)
    assert batch_ids(ckpt / "commits") == [0, 1, 2]
    assert not (ckpt / "commits" / ".3.crc").exists()
    ckpt = make_checkpoint(tmp_path / "c")
    assert "commits/2" in apply_nemesis("delete_middle_commit", ckpt)
    assert batch_ids(ckpt / "commits") == [0, 1, 3]


def test_metadata_flip_and_rollback(tmp_path: Path) -> None:
    ckpt = make_checkpoint(tmp_path / "a")
    apply_nemesis("remove_metadata", ckpt)
    assert not (ckpt / "metadata").exists()
    ckpt = make_checkpoint(tmp_path / "b", batches=4, committed=3)
    desc = apply_nemesis("flip_offset_stale_crc", ckpt)
    assert "offsets/2" in desc and "stale" in desc
    assert read_offsets(ckpt, 2).sources == ({"0": 50, "1": 45},)  # 60 -> 50, crc untouched
    assert (ckpt / "offsets" / ".2.crc").read_bytes() == b"crc"
    ckpt = make_checkpoint(tmp_path / "c")
    apply_nemesis("rollback_latest_offsets", ckpt)
    assert read_offsets(ckpt, 3).sources == read_offsets(ckpt, 2).sources
    assert batch_ids(ckpt / "commits") == [0, 1, 2]


def test_inapplicable_nemesis_is_refused_with_the_path(tmp_path: Path) -> None:
    ckpt = make_checkpoint(tmp_path, batches=2, committed=2)
    with pytest.raises(NemesisError, match="at least 3 commits"):
        apply_nemesis("delete_middle_commit", ckpt)
    with pytest.raises(KeyError, match="known: truncate_latest_offsets"):
        apply_nemesis("nope", ckpt)
    assert len(NEMESES) == 10
