"""scenarios/delta/source.py without Spark: the table delta-rs publishes from the tap, and which rows each batch
read, found from Delta source offsets the way Spark 4.2 + Delta 4.4 write them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.inspector.synth import commit_text, offsets_text, write_with_crc
from scenarios.delta.log import read_log
from scenarios.delta.source import BATCH_COLUMN, DeltaTableSource, _read_by, publish, source_table
from scenarios.rowgen import ConfigError, SourceConfig
from scenarios.sources import SourceRun
from scenarios.tap import init_tap, write_tap

pytestmark = pytest.mark.unit


def _run(tmp_path: Path) -> SourceRun:
    tap = tmp_path / "tap.json"
    init_tap(tap, 2)
    return SourceRun(SourceConfig(seed=3, partitions=2), str(tap), str(tmp_path / "input"),
                     str(tmp_path / "checkpoint"), str(tmp_path / "faults"), None, False)  # fmt: skip


def test_publishing_appends_only_what_the_table_lacks_one_commit_per_partition_and_range(tmp_path: Path) -> None:
    run = _run(tmp_path)
    write_tap(run.tap, {0: 5, 1: 3})
    assert publish(run) == [(0, 0, 5), (1, 0, 3)]
    assert publish(run) == []  # again after a kill: nothing twice
    write_tap(run.tap, {0: 8, 1: 3})
    assert publish(run) == [(0, 5, 8)]
    commits = read_log(source_table(run))
    assert [len(c.adds) for c in commits] == [0, 1, 1, 1]  # version 0: the empty creation


def _delta_offset(version: int, index: int) -> dict[str, object]:
    return {"sourceVersion": 1, "reservoirId": "r", "reservoirVersion": version, "index": index,
            "isStartingVersion": False}  # fmt: skip


def test_each_batch_is_named_by_the_versions_between_its_offsets(tmp_path: Path) -> None:
    run = _run(tmp_path)
    write_tap(run.tap, {0: 4, 1: 2})
    publish(run)  # versions 1 (p0 [0,4)) and 2 (p1 [0,2))
    write_tap(run.tap, {0: 6, 1: 2})
    publish(run)  # version 3 (p0 [4,6))
    ck = Path(run.checkpoint)
    (ck / "offsets").mkdir(parents=True)
    (ck / "commits").mkdir()
    (ck / "metadata").write_text(json.dumps({"id": "q"}))
    # Batch 0 read version 1, batch 1 version 2 (its file, index 0, named by the end offset), batch 2 version 3.
    for batch, end in enumerate([_delta_offset(2, -1), _delta_offset(2, 0), _delta_offset(4, -1)]):
        write_with_crc(ck / "offsets" / str(batch), offsets_text([end], 0, batch))
        write_with_crc(ck / "commits" / str(batch), commit_text(0))
    table = DeltaTableSource().input_batches(run, ("partition", "offset"))
    assert table is not None
    got = sorted(zip(*(table.column(c).to_pylist() for c in (BATCH_COLUMN, "partition", "offset")), strict=True))
    assert got == [(0, 0, o) for o in range(4)] + [(1, 1, 0), (1, 1, 1), (2, 0, 4), (2, 0, 5)]


@pytest.mark.parametrize(
    ("start", "end", "version", "read"),
    [
        (None, (2, -1), 1, True),
        ((2, -1), (2, 0), 2, True),
        ((2, 0), (3, -1), 2, False),  # the start already holds version 2's file
        ((2, -1), (2, -1), 2, False),  # an empty batch
        ((1, -1), (5, -1), 5, False),  # (5, -1) is before version 5's files
    ],
)
def test_read_by(start: tuple[int, int] | None, end: tuple[int, int], version: int, read: bool) -> None:
    assert _read_by(start, end, version) is read


def test_rate_limits_and_the_starting_version_are_the_harness_s(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="maxFilesPerTrigger"):
        DeltaTableSource(options=(("maxFilesPerTrigger", "3"),))
    with pytest.raises(ConfigError, match="max_files_per_trigger=0"):
        DeltaTableSource(max_files_per_trigger=0)
    assert DeltaTableSource()._reader_options() == {"startingVersion": "0", "maxFilesPerTrigger": "1"}


def test_the_published_schema_is_the_replayable_source_s() -> None:
    from scenarios.delta.source import _arrow_schema
    from scenarios.rowgen import SCHEMA_DDL

    ddl = [tuple(c.split()) for c in SCHEMA_DDL.split(", ")]
    arrow = {"INT": "int32", "BIGINT": "int64", "TIMESTAMP": "timestamp[us, tz=UTC]"}
    assert [(f.name, str(f.type)) for f in _arrow_schema()] == [(n, arrow[t]) for n, t in ddl]
