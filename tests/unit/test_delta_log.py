"""scenarios.delta.log: the pure reader of a Delta table's _delta_log, on hand-made logs in the shape Delta 4.4
on Spark writes and on real logs written by delta-rs (``deltalake``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

from scenarios.delta.log import (
    Commit,
    DeltaLogError,
    adding_versions,
    is_delta_table,
    read_log,
    txn_commits,
)

pytestmark = pytest.mark.unit

QUERY = "2f6b9f0e-3c1a-4d55-9a7e-0c9d7b1f2a10"


def commit_lines(
    version: int,
    txns: Sequence[tuple[str, int]] = (),
    adds: Sequence[str] = (),
    removes: Sequence[str] = (),
    operation: str = "STREAMING UPDATE",
) -> list[dict[str, Any]]:
    """The actions of one commit, shaped like Delta 4.4 on Spark writes them."""
    actions: list[dict[str, Any]] = [
        {
            "commitInfo": {
                "timestamp": 1_795_000_000_000 + version,
                "operation": operation,
                "operationParameters": {"outputMode": "Append", "queryId": QUERY, "epochId": str(version)},
                "readVersion": version - 1,
                "isolationLevel": "Serializable",
                "isBlindAppend": True,
                "engineInfo": "Apache-Spark/4.2.0 Delta-Lake/4.4.0",
                "txnId": "9e1c…",
            }
        }
    ]
    if version == 0:
        actions.append({"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}}}})
        actions.append({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})
    actions += [{"txn": {"appId": a, "version": v, "lastUpdated": 1_795_000_000_000}} for a, v in txns]
    actions += [{"remove": {"path": p, "deletionTimestamp": 1, "dataChange": True}} for p in removes]
    actions += [
        {"add": {"path": p, "partitionValues": {}, "size": 485, "modificationTime": 1, "dataChange": True}}
        for p in adds
    ]
    return actions


def write_commit(table: Path, version: int, actions: list[dict[str, Any]] | str) -> Path:
    """``_delta_log/<version>.json`` (one action per line) plus the ``.crc`` Spark writes beside it."""
    log = table / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    path = log / f"{version:020d}.json"
    path.write_text(actions if isinstance(actions, str) else "\n".join(json.dumps(a) for a in actions) + "\n")
    (log / f"{version:020d}.crc").write_text('{"tableSizeBytes":485,"numFiles":1}')
    return path


def spark_table(table: Path, batches: list[int], app: str = QUERY) -> Path:
    """A table whose Delta version ``i`` wrote batch ``batches[i]`` with ``txn(app, batch)``."""
    for version, batch in enumerate(batches):
        write_commit(table, version, commit_lines(version, [(app, batch)], [f"part-{version:05d}.snappy.parquet"]))
    return table


def test_reads_a_spark_shaped_log_and_ignores_sidecars_staged_commits_and_temp_files(tmp_path: Path) -> None:
    t = tmp_path / "t"
    write_commit(t, 0, commit_lines(0, [(QUERY, 0)], ["date=2026-01-01/part%20a.parquet"], operation="WRITE"))
    write_commit(t, 1, commit_lines(1, [(QUERY, 1), ("other", 9)], ["part-b.parquet"]))
    write_commit(t, 2, commit_lines(2, [], ["part-c.parquet"], ["part-b.parquet"], operation="MERGE"))
    log = t / "_delta_log"
    (log / "_staged_commits").mkdir()
    (log / "_staged_commits" / "00000000000000000003.3a0d65cd-4d7f-4bd9-b0e6-e1b1b1f4a0d5.json").write_text("x")
    (log / ".00000000000000000003.json.5c1e4b1a-0000-4000-8000-000000000000.tmp").write_text("{")
    (log / "_commit_0f1e.json.tmp").write_text("{")
    (log / "00000000000000000000.00000000000000000002.compacted.json").write_text("{")
    assert is_delta_table(t)
    assert read_log(t) == [
        Commit(0, ((QUERY, 0),), ("date=2026-01-01/part a.parquet",), (), "WRITE", 1_795_000_000_000),
        Commit(1, ((QUERY, 1), ("other", 9)), ("part-b.parquet",), (), "STREAMING UPDATE", 1_795_000_000_001),
        Commit(2, (), ("part-c.parquet",), ("part-b.parquet",), "MERGE", 1_795_000_000_002),
    ]


def test_txn_commits_and_adding_versions(tmp_path: Path) -> None:
    t = spark_table(tmp_path / "t", [0, 1, 1, 2])
    write_commit(t, 4, commit_lines(4, [], ["part-00001.snappy.parquet"], ["part-00001.snappy.parquet"]))
    write_commit(t, 5, commit_lines(5, [], [], ["part-00003.snappy.parquet"]))
    commits = read_log(t)
    assert txn_commits(commits, QUERY) == {0: [0], 1: [1, 2], 2: [3]}
    assert txn_commits(commits, "nobody") == {}
    assert adding_versions(commits) == {
        "part-00000.snappy.parquet": 0,
        "part-00001.snappy.parquet": 4,  # removed and re-added in one commit: the latest add wins
        "part-00002.snappy.parquet": 2,
    }  # part-00003 was removed by version 5


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"commitInfo":{}}\n{"add":{"path":"a"}}\n{"txn":{"appId":"q","vers', "line 3 is not JSON ("),
        ("", "is empty (a truncated write or copy)"),
        ("[1, 2]\n", "line 1 is not a JSON object (one action per line)"),
        ('{"txn":{"appId":"q"}}\n', "line 1: txn action without a string appId and an integer version"),
        ('{"add":{"size":3}}\n', "line 1: add action without a path"),
        (b"\xff\xfe garbage", "not UTF-8 text (garbage bytes at offset 0)"),
    ],
)
def test_a_damaged_commit_raises_one_line_naming_file_and_line(
    tmp_path: Path, content: str | bytes, problem: str
) -> None:
    t = spark_table(tmp_path / "t", [0])
    bad = t / "_delta_log" / "00000000000000000001.json"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(DeltaLogError) as info:
        read_log(t)
    assert info.value.path == str(bad)
    assert info.value.problem.startswith(problem)
    assert str(info.value).startswith(f"{bad}: {problem}") and "\n" not in str(info.value)


def test_a_version_missing_in_the_middle_is_named(tmp_path: Path) -> None:
    t = spark_table(tmp_path / "t", [0, 1, 2, 3, 4, 5, 6])
    (t / "_delta_log" / "00000000000000000005.json").unlink()
    with pytest.raises(DeltaLogError, match=r"00000000000000000005\.json: version 5 missing between 4 and 6"):
        read_log(t)
    for v in (2, 3):
        (t / "_delta_log" / f"{v:020d}.json").unlink()
    with pytest.raises(DeltaLogError, match=r"00000000000000000002\.json: versions 2\.\.3 missing between 1 and 4"):
        read_log(t)


def test_not_a_delta_table(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "empty" / "_delta_log" / "_staged_commits").mkdir(parents=True)
    (tmp_path / "empty" / "_delta_log" / "00000000000000000000.crc").write_text("{}")
    for p in (tmp_path / "plain", tmp_path / "missing"):
        assert not is_delta_table(p)
        with pytest.raises(DeltaLogError) as info:
            read_log(p)
        assert (info.value.path, info.value.problem) == (str(p), "not a Delta table (no _delta_log)")
    assert not is_delta_table(tmp_path / "empty")
    with pytest.raises(DeltaLogError, match="not a Delta table"):
        read_log(tmp_path / "empty")


def test_history_before_the_first_json_needs_a_checkpoint(tmp_path: Path) -> None:
    t = spark_table(tmp_path / "t", [0, 1, 2, 3])
    for v in (0, 1):
        (t / "_delta_log" / f"{v:020d}.json").unlink()
    with pytest.raises(DeltaLogError) as info:
        read_log(t)
    assert info.value.path == str(t / "_delta_log" / "00000000000000000000.json")
    assert info.value.problem.startswith("versions 0..1 missing before 2 and no checkpoint covers them")


def _checkpoint_part(path: Path, txns: list[tuple[str, int]], adds: list[str]) -> None:
    """A checkpoint parquet with the ``txn`` and ``add`` columns of Delta's schema (one action per row)."""
    txn_type = pa.struct([("appId", pa.string()), ("version", pa.int64()), ("lastUpdated", pa.int64())])
    add_type = pa.struct([("path", pa.string()), ("size", pa.int64()), ("dataChange", pa.bool_())])
    rows_txn: list[dict[str, Any] | None] = [{"appId": a, "version": v, "lastUpdated": 1} for a, v in txns]
    rows_add: list[dict[str, Any] | None] = [{"path": p, "size": 1, "dataChange": False} for p in adds]
    txn_col = rows_txn + [None] * len(adds)
    add_col = [None] * len(txns) + rows_add
    pq.write_table(pa.table({"txn": pa.array(txn_col, txn_type), "add": pa.array(add_col, add_type)}), path)


def test_multi_part_checkpoint_starts_a_cleaned_up_history(tmp_path: Path) -> None:
    t = spark_table(tmp_path / "t", [0, 1, 2, 3, 4])
    log = t / "_delta_log"
    _checkpoint_part(log / "00000000000000000002.checkpoint.0000000001.0000000002.parquet", [(QUERY, 2)], ["a%20b"])
    _checkpoint_part(log / "00000000000000000002.checkpoint.0000000002.0000000002.parquet", [("x", 7)], ["c"])
    for v in (0, 1):
        (log / f"{v:020d}.json").unlink()
    commits = read_log(t)
    assert commits[0] == Commit(2, ((QUERY, 2), ("x", 7)), ("a b", "c"), (), None, None, from_checkpoint=True)
    assert [c.version for c in commits] == [2, 3, 4]  # the JSON of version 2 is folded into the checkpoint
    assert txn_commits(commits, QUERY) == {2: [2], 3: [3], 4: [4]}
    (log / "00000000000000000002.checkpoint.0000000002.0000000002.parquet").unlink()  # incomplete: unusable
    with pytest.raises(DeltaLogError, match="no checkpoint covers them"):
        read_log(t)


def test_a_checkpoint_newer_than_every_commit_file_is_damage(tmp_path: Path) -> None:
    t = spark_table(tmp_path / "t", [0, 1])
    _checkpoint_part(t / "_delta_log" / "00000000000000000003.checkpoint.parquet", [(QUERY, 3)], ["c"])
    with pytest.raises(DeltaLogError, match=r"versions 2\.\.3 missing: checkpoint 3 is newer"):
        read_log(t)


def test_a_damaged_checkpoint_is_named(tmp_path: Path) -> None:
    t = spark_table(tmp_path / "t", [0, 1, 2])
    bad = t / "_delta_log" / "00000000000000000001.checkpoint.parquet"
    bad.write_bytes(b"PAR1 not really")
    (t / "_delta_log" / "00000000000000000000.json").unlink()
    with pytest.raises(DeltaLogError) as info:
        read_log(t)
    assert info.value.path == str(bad) and info.value.problem.startswith("checkpoint cannot be read")


def _delta_rs_write(table: Path, app: str, version: int, mode: Literal["append", "overwrite"] = "append") -> None:
    data = pa.table({"id": [version * 10, version * 10 + 1], "p": ["a b", "c/d%"]})
    props = CommitProperties(app_transactions=[Transaction(app, version)])
    write_deltalake(str(table), data, mode=mode, commit_properties=props, partition_by="p")


def test_reads_a_real_delta_rs_log(tmp_path: Path) -> None:
    t = tmp_path / "t"
    for batch in range(3):
        _delta_rs_write(t, "app", batch)
    _delta_rs_write(t, "app", 1)  # delta-rs does not skip a txn version the table holds (delta-rs #2580)
    _delta_rs_write(t, "app", 3, mode="overwrite")
    dt = DeltaTable(str(t))
    commits = read_log(t)
    assert [c.version for c in commits] == list(range(dt.version() + 1)) == [0, 1, 2, 3, 4]
    assert [c.operation for c in commits] == ["WRITE"] * 5
    assert all(c.timestamp_ms for c in commits)
    by_txn = txn_commits(commits, "app")
    assert by_txn == {0: [0], 1: [1, 3], 2: [2], 3: [4]}
    assert max(by_txn) == dt.transaction_version("app")
    live = adding_versions(commits)
    assert set(live.values()) == {4}  # the overwrite removed every earlier file
    assert sorted(str(t / p) for p in live) == sorted(dt.file_uris())
    assert all((t / p).is_file() for p in live)  # URL-decoded: p=a%20b on disk is p=a%2520b in the log
    assert len(commits[4].removes) == 8


def test_reads_a_real_delta_rs_checkpoint_after_cleanup(tmp_path: Path) -> None:
    t = tmp_path / "t"
    for batch in range(3):
        _delta_rs_write(t, "app", batch)
    DeltaTable(str(t)).create_checkpoint()
    _delta_rs_write(t, "app", 3)
    for v in (0, 1):
        (t / "_delta_log" / f"{v:020d}.json").unlink()
    commits = read_log(t)
    assert [(c.version, c.from_checkpoint) for c in commits] == [(2, True), (3, False)]
    assert commits[0].txns == (("app", 2),)  # a checkpoint keeps the newest txn per app id only
    assert txn_commits(commits, "app") == {2: [2], 3: [3]}
    dt = DeltaTable(str(t))
    assert sorted(str(t / p) for p in adding_versions(commits)) == sorted(dt.file_uris())


def test_v2_checkpoint_with_a_sidecar(tmp_path: Path) -> None:
    t = spark_table(tmp_path / "t", [0, 1, 2, 3])
    log = t / "_delta_log"
    (log / "_sidecars").mkdir()
    _checkpoint_part(log / "_sidecars" / "016ae953-37a9-438e-8683-9a9a4a79a395.parquet", [], ["side%20car"])
    top = [
        {"checkpointMetadata": {"version": 2}},
        {"txn": {"appId": QUERY, "version": 2}},
        {"add": {"path": "inline", "size": 1, "dataChange": False}},
        {"sidecar": {"path": "016ae953-37a9-438e-8683-9a9a4a79a395.parquet", "sizeInBytes": 1}},
    ]
    v2 = log / "00000000000000000002.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json"
    v2.write_text("\n".join(json.dumps(a) for a in top))
    for v in (0, 1, 2):
        (log / f"{v:020d}.json").unlink()
    commits = read_log(t)
    assert commits[0] == Commit(2, ((QUERY, 2),), ("inline", "side car"), (), None, None, from_checkpoint=True)
    assert [c.version for c in commits] == [2, 3]
    (log / "_sidecars" / "016ae953-37a9-438e-8683-9a9a4a79a395.parquet").unlink()
    with pytest.raises(DeltaLogError, match=r"sidecar of checkpoint .* is missing"):
        read_log(t)


def test_a_checkpoint_without_txns_has_none(tmp_path: Path) -> None:
    t = spark_table(tmp_path / "t", [0, 1])
    pq.write_table(
        pa.table({"txn": pa.nulls(1), "add": [{"path": "a", "size": 1}]}),
        t / "_delta_log" / ("00000000000000000000.checkpoint.parquet"),
    )
    (t / "_delta_log" / "00000000000000000000.json").unlink()
    assert read_log(t)[0] == Commit(0, (), ("a",), (), None, None, from_checkpoint=True)
