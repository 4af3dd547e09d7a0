"""Parsers of the checkpoint inspector: logs, checksums, state names, compactible logs.

File contents here are copied from checkpoints PySpark 4.3.0 wrote on this machine.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from harness.inspector import (
    CheckpointError,
    batch_ids,
    latest_batch_id,
    read_batches,
    read_commit,
    read_metadata,
    read_offsets,
    read_state,
)
from harness.inspector.crc import (
    crc32c,
    hadoop_crc_bytes,
    scan_tree,
    verify_hadoop_crc,
    verify_spark_checksum,
)
from harness.inspector.sinklog import read_log, uri_to_path
from harness.inspector.synth import SPARK_43_CONF, offsets_text, write_with_crc

META = (
    '{"batchWatermarkMs":1700000039000,"batchTimestampMs":1795357159502,"conf":{"spark.sql.shuffle.partitions":"2",'
    '"spark.sql.streaming.stateStore.providerClass":'
    '"org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"}}'
)


def _put(root: Path, rel: str, text: str | bytes) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def test_offsets_v1_real_shape(tmp_path: Path) -> None:
    _put(tmp_path, "offsets/5", f'v1\n{META}\n{{"0": 50, "1": 50}}\n-')
    e = read_offsets(tmp_path, 5)
    assert (e.batch_id, e.version, e.watermark_ms, e.timestamp_ms) == (5, 1, 1700000039000, 1795357159502)
    assert e.conf["spark.sql.shuffle.partitions"] == "2"
    assert e.sources == ({"0": 50, "1": 50}, None)
    assert e.source_keys() == ("0", "1")


def test_offsets_v2_source_ids_and_metadata(tmp_path: Path) -> None:
    meta = '{"batchWatermarkMs":0,"batchTimestampMs":1795357865947,"conf":{},"sourceMetadataInfo":{"a":{"x":1}}}'
    _put(tmp_path, "offsets/1", f'v2\n{meta}\n0:{{"0": 20, "1": 20}}\nkafka-in:-')
    e = read_offsets(tmp_path, 1)
    assert e.version == 2
    assert e.source_ids == ("0", "kafka-in")
    assert e.sources == ({"0": 20, "1": 20}, None)
    assert e.source_metadata == {"a": {"x": 1}}


def test_offsets_v2_line_without_source_id_is_corrupt(tmp_path: Path) -> None:
    _put(tmp_path, "offsets/0", 'v2\n{}\n{"0": 1}')
    with pytest.raises(CheckpointError, match="sourceId:offset"):
        read_offsets(tmp_path, 0)


def test_offsets_empty_metadata_line_means_defaults_like_spark(tmp_path: Path) -> None:
    _put(tmp_path, "offsets/0", "v1\n\n7")
    e = read_offsets(tmp_path, 0)
    assert (e.watermark_ms, e.timestamp_ms, e.conf, e.sources) == (0, 0, {}, (7,))


@pytest.mark.parametrize(
    ("content", "kind", "fragment"),
    [
        ("", "corrupt", "file is empty"),
        ("v1", "corrupt", "metadata line is missing"),
        ('v1\n{"batchWatermarkMs":0,"batchTi', "corrupt", "not valid JSON"),
        (b"\x00\xff\xfe garbage", "corrupt", "not UTF-8"),
        ("v9\n{}", "version", "newer than Spark 4.3 reads (v1..v2)"),
        ("x1\n{}", "version", "first line should be a log version"),
        ("v0\n{}", "version", "first line should be a log version"),
    ],
)
def test_offsets_damage_is_named(tmp_path: Path, content: str | bytes, kind: str, fragment: str) -> None:
    path = _put(tmp_path, "offsets/3", content)
    with pytest.raises(CheckpointError) as info:
        read_offsets(tmp_path, 3)
    assert info.value.kind == kind
    assert info.value.path == str(path)
    assert fragment in info.value.problem


def test_commits_v1_v2_v3(tmp_path: Path) -> None:
    _put(tmp_path, "commits/0", 'v1\n{"nextBatchWatermarkMs":1699999999000}')
    v2 = '{"nextBatchWatermarkMs":1700000019000,"stateUniqueIds":{"0":[["5d79161b"],["aae28721"]]}}'
    _put(tmp_path, "commits/1", f"v2\n{v2}")
    _put(tmp_path, "commits/2", 'v3\n{"nextBatchWatermarkMs":5,"sinkMetadataMap":{"s":{"commitOffset":"7"}}}')
    assert read_commit(tmp_path, 0).next_watermark_ms == 1699999999000
    c1 = read_commit(tmp_path, 1)
    assert (c1.version, c1.state_unique_ids) == (2, {"0": [["5d79161b"], ["aae28721"]]})
    c2 = read_commit(tmp_path, 2)
    assert (c2.version, c2.sink_metadata) == (3, {"s": {"commitOffset": "7"}})
    _put(tmp_path, "commits/3", "v4\n{}")
    with pytest.raises(CheckpointError, match=r"v1\.\.v3"):
        read_commit(tmp_path, 3)


def test_metadata(tmp_path: Path) -> None:
    _put(tmp_path, "metadata", '{"id":"7bea52d3-4551-4f8c-9b0f-3f9b7e1d6ba2"}')
    assert read_metadata(tmp_path).query_id == "7bea52d3-4551-4f8c-9b0f-3f9b7e1d6ba2"
    _put(tmp_path, "metadata", '{"name":"x"}')
    with pytest.raises(CheckpointError, match="query id"):
        read_metadata(tmp_path)


def test_batch_ids_skip_sidecars_temp_files_and_non_ascii_digits(tmp_path: Path) -> None:
    for name in ["0", "1", "10", ".1.crc", ".2.3f1c.tmp", "..2.3f1c.tmp.crc", "\u0663", "9.compact", "x"]:
        _put(tmp_path, f"offsets/{name}", "v1\n{}")
    assert batch_ids(tmp_path / "offsets") == [0, 1, 9, 10]
    assert batch_ids(tmp_path / "nope") == []


def test_read_batches_keeps_runner_semantics(tmp_path: Path) -> None:
    for bid in range(3):
        write_with_crc(tmp_path / "offsets" / str(bid), offsets_text([{"0": 10 * (bid + 1)}], 0, 1000 + bid))
    write_with_crc(tmp_path / "commits" / "0", 'v1\n{"nextBatchWatermarkMs":0}')
    recs = read_batches(tmp_path)
    assert [(r.batch_id, r.committed) for r in recs] == [(0, True), (1, False), (2, False)]
    assert [r.start for r in recs] == [(None,), ({"0": 10},), ({"0": 20},)]
    assert latest_batch_id(tmp_path) == 2
    assert json.loads(offsets_text([None], 0, 1).split("\n")[1])["conf"] == SPARK_43_CONF


def test_crc32c_check_value() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # the standard CRC-32C check value


def test_hadoop_crc_detects_edit_and_resize() -> None:
    data = bytes(range(256)) * 5  # 1280 bytes: 3 chunks of 512
    side = hadoop_crc_bytes(data)
    assert side[:8] == b"crc\x00\x00\x00\x02\x00" and len(side) == 8 + 3 * 4
    assert side[8:12] == zlib.crc32(data[:512]).to_bytes(4, "big")
    assert verify_hadoop_crc(data, side) == ""
    edited = data[:600] + bytes([data[600] ^ 1]) + data[601:]
    assert verify_hadoop_crc(edited, side) == "bytes 512..1023 differ from what Spark wrote"
    assert "changed size" in verify_hadoop_crc(data[:100], side)
    assert "bad header" in verify_hadoop_crc(data, b"nope")


def test_spark_json_checksum_signed_value() -> None:
    data = b"state file bytes" * 300
    value = crc32c(data)
    signed = value - (1 << 32) if value >= 1 << 31 else value
    side = json.dumps({"algorithm": "CRC32C", "value": signed, "mainFileSize": len(data)}).encode()
    assert verify_spark_checksum(data, side) == ""
    assert "CRC32C differs" in verify_spark_checksum(data[:-1] + b"!", side)
    assert "changed after" in verify_spark_checksum(data + b"!", side)


def test_scan_tree_verifies_and_finds_orphans_and_temp_files(tmp_path: Path) -> None:
    write_with_crc(tmp_path / "offsets" / "0", "v1\n{}")
    write_with_crc(tmp_path / "offsets" / "1", "v1\n{}")
    (tmp_path / "offsets" / "1").write_text("v1\n{}\nedited")
    _put(tmp_path, "commits/.7.crc", hadoop_crc_bytes(b"gone"))
    _put(tmp_path, "offsets/.2.0c3c73ce-2704-4317-b955-9dae91d16313.tmp", "v1")
    scan = scan_tree(tmp_path)
    assert {r.main.name: r.ok for r in scan.results} == {"0": True, "1": False}
    assert [p.name for p in scan.orphans] == [".7.crc"]
    assert [p.name for p in scan.temp_files] == [".2.0c3c73ce-2704-4317-b955-9dae91d16313.tmp"]


def test_sidecar_left_behind_by_a_kill_between_renames_still_verifies(tmp_path: Path) -> None:
    # Seen after SIGKILL: offsets/4 renamed into place, its sidecar still under the temp name.
    data = offsets_text([{"0": 85, "1": 52}], 0, 1795357157324).encode()
    _put(tmp_path, "offsets/4", data)
    _put(tmp_path, "offsets/..4.a4b16399-7738-4918-8701-16435b86a9ea.tmp.crc", hadoop_crc_bytes(data))
    _put(tmp_path, "commits/0", b"v1")
    _put(tmp_path, "commits/..0.ea4aa773-1fad-4799-93c6-bd501127b141.TID7.tmp.crc", hadoop_crc_bytes(b"v2"))
    scan = scan_tree(tmp_path)
    assert sorted((r.main.name, r.ok) for r in scan.results) == [("0", False), ("4", True)]
    assert len(scan.temp_files) == 2


def test_state_names_and_loadability(tmp_path: Path) -> None:
    meta = {
        "operatorInfo": {"operatorId": 0, "operatorName": "stateStoreSave"},
        "stateStoreInfo": [{"storeName": "default", "numColsPrefixKey": 0, "numPartitions": 2}],
    }
    _put(tmp_path, "state/0/_metadata/metadata", "v1\n" + json.dumps(meta))
    for v in [1, 2, 3, 4, 6]:
        _put(tmp_path, f"state/0/0/{v}.delta", b"LZ4Block")
    _put(tmp_path, "state/0/0/4.snapshot", b"LZ4Block")
    _put(tmp_path, "state/0/0/_metadata/schema", b"\x00\x02v2")
    _put(tmp_path, "state/0/1/3_0c3c73ce-2704-4317-b955-9dae91d16313.zip", b"PK")
    _put(tmp_path, "state/0/1/SSTs/000008-5984aaaf.sst", b"x")
    ops, errors = read_state(tmp_path)
    assert errors == []
    (op,) = ops
    assert (op.operator_id, op.name, op.num_partitions, op.partition_ids) == (0, "stateStoreSave", 2, [0, 1])
    p0, p1 = op.stores
    assert p0.versions == [1, 2, 3, 4, 6]
    assert p0.loadable(4) == "" and p0.loadable(3) == ""
    assert (
        p0.loadable(6) == "version 6 cannot be rebuilt: the newest full copy at or below it is version 4 and "
        "version 5 is missing"
    )
    assert p0.loadable(0) == ""
    assert [(f.version, f.kind, f.unique_id) for f in p1.files] == [(3, "zip", "0c3c73ce-2704-4317-b955-9dae91d16313")]


def test_compactible_sink_log(tmp_path: Path) -> None:
    def entry(name: str, action: str = "add") -> str:
        return json.dumps({"path": f"file://{tmp_path}/out/{name}", "size": 1, "isDir": False, "action": action})

    _put(tmp_path, "out/_spark_metadata/0", "\n".join(["v1", entry("a"), entry("b")]))
    _put(tmp_path, "out/_spark_metadata/1.compact", "\n".join(["v1", entry("a"), entry("b"), entry("c")]))
    _put(tmp_path, "out/_spark_metadata/2", "\n".join(["v1", entry("a", "delete"), entry("d")]))
    _put(tmp_path, "out/_spark_metadata/3", "v1\n" + entry("e")[:30])
    log = read_log(tmp_path / "out" / "_spark_metadata")
    assert log.ids == [0, 1, 2, 3] and log.unreadable == {3} and log.latest_compact == 1
    assert [e.problem for e in log.errors] == [
        "line 2 is not valid JSON (Unterminated string starting at): a truncated or edited file"
    ]
    assert sorted(Path(e["path"]).name for e in log.live_entries()) == ["b", "c", "d"]
    assert [log.added_by(b) for b in range(4)] == [2, 1, 1, None]
    assert log.covers(0) and log.covers(3) and not log.covers(4)


def test_source_log_with_kafka_zero_byte_and_uri_paths(tmp_path: Path) -> None:
    _put(tmp_path, "sources/0/0", b'\x00v1\n{"topic":{"0":5}}')
    log = read_log(tmp_path / "sources" / "0")
    assert log.batches[0].entries == ({"topic": {"0": 5}},)
    assert uri_to_path("file:///tmp/a%20b/part-0.parquet") == Path("/tmp/a b/part-0.parquet")
    assert uri_to_path("s3a://bucket/x") is None
