"""Spark's maintenance boundaries: named from what a run left, predicted from batch ids, and aimed at by chaos."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.chaos.strategies import chaos_specs
from harness.engine.schedule import build_schedule
from harness.inspector.boundaries import (
    FILE_SINK_COMPACTION,
    STATE_SNAPSHOT,
    batch_boundaries,
    compaction_batches,
)
from scenarios import get_scenario
from tests.admission import needs_read_limits

STATELESS = get_scenario("file_sink_stateless")


def test_compaction_batches_are_every_tenth_from_batch_9() -> None:
    assert compaction_batches(60) == [9, 19, 29, 39, 49, 59]
    assert compaction_batches(9) == [] and compaction_batches(10) == [9]


def test_a_batch_is_named_by_the_files_its_boundaries_left(tmp_path: Path) -> None:
    ckpt, sink = tmp_path / "ckpt", tmp_path / "out"
    (sink / "_spark_metadata").mkdir(parents=True)
    for n in range(9):
        (sink / "_spark_metadata" / str(n)).write_text("v1\n")
    (sink / "_spark_metadata" / "9.compact").write_text("v1\n")
    store = ckpt / "state" / "0" / "1"
    store.mkdir(parents=True)
    for name in ("10.delta", "11.delta", "20.snapshot", "31.zip", "32.changelog", "40_0a1b-2c.zip"):
        (store / name).write_text("")
    assert batch_boundaries(ckpt, sink, 9) == [FILE_SINK_COMPACTION]
    assert batch_boundaries(ckpt, sink, 10) == []  # 11.delta: an ordinary batch
    assert batch_boundaries(ckpt, sink, 19) == [STATE_SNAPSHOT]  # version 20 = batch 19
    assert batch_boundaries(ckpt, None, 30) == [STATE_SNAPSHOT]  # RocksDB's full copy between changelogs
    assert batch_boundaries(ckpt, None, 31) == []  # a changelog is not a full copy
    assert batch_boundaries(ckpt, None, 39) == [STATE_SNAPSHOT]  # checkpoint format v2 names
    zips = tmp_path / "zips" / "state" / "0" / "0"
    zips.mkdir(parents=True)
    for v in (1, 2, 3):
        (zips / f"{v}.zip").write_text("")
    assert batch_boundaries(tmp_path / "zips", None, 1) == []  # RocksDB without changelogs: a .zip every version
    assert batch_boundaries(tmp_path / "missing", tmp_path / "missing", 9) == []


def _batches_of(spec: object) -> list[int]:
    return [f.batch for f in spec.extra_faults if f.batch is not None]  # type: ignore[attr-defined]


def _collect(strategy: st.SearchStrategy[object], n: int) -> list[object]:
    seen: list[object] = []

    @settings(max_examples=n, deadline=None, database=None, derandomize=True)
    @given(strategy)
    def collect(spec: object) -> None:
        seen.append(spec)

    collect()
    return seen


@needs_read_limits
def test_long_schedules_aim_faults_at_compaction_batches() -> None:
    hits = total = long = 0
    for spec in _collect(chaos_specs(STATELESS, max_rounds=2, max_faults=3, batch_rows=4), 200):
        n = len(build_schedule(spec, STATELESS).predicted_batches)  # type: ignore[arg-type]
        assert spec.batch_rows == 4 and all(b < n for b in _batches_of(spec))  # type: ignore[attr-defined]
        if n < 20:
            continue
        long += 1
        for b in _batches_of(spec):
            total += 1
            hits += b in compaction_batches(n)
    # By chance about 1 fault in 10 lands in a compaction batch; aimed, about half do.
    assert long > 50 and total > 80 and hits / total > 0.3, (long, hits, total)
