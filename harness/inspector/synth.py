"""Synthetic checkpoints byte-for-byte in the shape PySpark 4.3 writes (format v1).

For tests and benchmarks that need many batches or exact damage without running
Spark. Shapes copied from real checkpoints written by PySpark 4.3.0 here:
``metadata`` = ``{"id":"<uuid>"}``; ``offsets/N`` = ``v1``, the batch metadata JSON
(no spaces; the 17 pinned confs), one offset line per source, no trailing newline;
``commits/N`` = ``v1`` + ``{"nextBatchWatermarkMs":N}``; every file with a Hadoop
``.<name>.crc`` sidecar; state as ``state/0/<p>/<N+1>.delta``; a file sink as
``<out>/_spark_metadata/N`` (``N.compact`` every 10th batch) plus part files.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from harness.inspector.crc import hadoop_crc_bytes

#: The confs PySpark 4.3.0 pins in every offsets/N (values of a local test session).
SPARK_43_CONF: dict[str, str] = {
    "spark.sql.streaming.stateStore.providerClass": (
        "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
    ),
    "spark.sql.dropDuplicates.deterministicKeyOrder.enabled": "true",
    "spark.sql.streaming.stateStore.rocksdb.mergeOperatorVersion": "2",
    "spark.sql.streaming.stateStore.rocksdb.formatVersion": "5",
    "spark.sql.streaming.queryEvolution.enableSourceEvolution": "false",
    "spark.sql.streaming.stateStore.encodingFormat": "unsaferow",
    "spark.sql.streaming.statefulOperator.useStrictDistribution": "true",
    "spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion": "2",
    "spark.sql.streaming.multipleWatermarkPolicy": "min",
    "spark.sql.streaming.stateStore.rowChecksum.enabled": "false",
    "spark.sql.streaming.statefulOperator.alwaysNullableOutput.enabled": "true",
    "spark.sql.streaming.aggregation.stateFormatVersion": "2",
    "spark.sql.function.protobufExtensions.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.streaming.join.stateFormatVersion": "2",
    "spark.sql.streaming.stateStore.compression.codec": "lz4",
    "spark.sql.optimizer.pruneFiltersCanPruneStreamingSubplan": "false",
}

_COMPACT = (",", ":")


def write_with_crc(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write ``data`` to ``path`` plus the hidden ``.<name>.crc`` Hadoop writes beside it."""
    p = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(raw)
    (p.parent / f".{p.name}.crc").write_bytes(hadoop_crc_bytes(raw))
    return p


def offsets_text(
    sources: list[object | None], watermark_ms: int, timestamp_ms: int, conf: dict[str, str] | None = None
) -> str:
    """The exact content of an ``offsets/N`` file (v1)."""
    meta = {"batchWatermarkMs": watermark_ms, "batchTimestampMs": timestamp_ms, "conf": conf or SPARK_43_CONF}
    lines = ["v1", json.dumps(meta, separators=_COMPACT)]
    lines += ["-" if s is None else json.dumps(s) for s in sources]
    return "\n".join(lines)


def commit_text(next_watermark_ms: int) -> str:
    """The exact content of a ``commits/N`` file (v1)."""
    return "v1\n" + json.dumps({"nextBatchWatermarkMs": next_watermark_ms}, separators=_COMPACT)


def sink_entry(path: Path, size: int, mtime_ms: int) -> str:
    """One ``_spark_metadata`` line, as ``FileStreamSinkLog`` writes it."""
    entry = {
        "path": path.absolute().as_uri(),
        "size": size,
        "isDir": False,
        "modificationTime": mtime_ms,
        "blockReplication": 1,
        "blockSize": 33554432,
        "action": "add",
    }
    return json.dumps(entry, separators=_COMPACT)


def synth_checkpoint(
    root: str | os.PathLike[str],
    batches: int = 5,
    *,
    sources: int = 1,
    partitions: int = 2,
    rows_per_batch: int = 10,
    committed: int | None = None,
    stateful: bool = False,
    watermark_step_ms: int = 0,
    sink_dir: str | os.PathLike[str] | None = None,
    compact_interval: int = 10,
    start_ms: int = 1_795_357_149_053,
) -> Path:
    """Write a checkpoint of ``batches`` batches (ids 0..batches-1) at ``root``.

    Each source is a replayable-style ``{"0": n, "1": n}`` offset advancing by
    ``rows_per_batch`` per partition; the first ``committed`` batches (default: all)
    get a commit. ``stateful`` adds operator 0 with one delta per partition per
    planned batch; ``sink_dir`` adds a file sink with one part file per partition
    per committed batch. Returns ``root``."""
    ck = Path(root)
    committed = batches if committed is None else committed
    write_with_crc(ck / "metadata", json.dumps({"id": str(uuid.UUID(int=batches))}, separators=_COMPACT))
    for bid in range(batches):
        ends = [{str(p): (bid + 1) * rows_per_batch for p in range(partitions)} for _ in range(sources)]
        wm = max(0, bid * watermark_step_ms)
        write_with_crc(ck / "offsets" / str(bid), offsets_text(list(ends), wm, start_ms + 500 * bid))
        if bid < committed:
            write_with_crc(ck / "commits" / str(bid), commit_text((bid + 1) * watermark_step_ms))
        if stateful:
            for p in range(partitions):
                write_with_crc(ck / "state" / "0" / str(p) / f"{bid + 1}.delta", b"LZ4Block" + bytes(24))
    if stateful:
        info = {
            "operatorInfo": {"operatorId": 0, "operatorName": "stateStoreSave"},
            "stateStoreInfo": [{"storeName": "default", "numColsPrefixKey": 0, "numPartitions": partitions}],
        }
        write_with_crc(ck / "state" / "0" / "_metadata" / "metadata", "v1\n" + json.dumps(info, separators=_COMPACT))
    if sink_dir is not None:
        _synth_sink(Path(sink_dir), committed, partitions, compact_interval, start_ms)
    return ck


def _synth_sink(out: Path, batches: int, partitions: int, interval: int, start_ms: int) -> None:
    everything: list[str] = []
    for bid in range(batches):
        lines = []
        for p in range(partitions):
            data = f"part {p} of batch {bid}\n".encode()
            f = write_with_crc(out / f"part-{p:05d}-{uuid.UUID(int=bid * 1000 + p)}-c000.snappy.parquet", data)
            lines.append(sink_entry(f, len(data), start_ms + 500 * bid))
        everything += lines
        if (bid + 1) % interval == 0:
            write_with_crc(out / "_spark_metadata" / f"{bid}.compact", "\n".join(["v1", *everything]))
        else:
            write_with_crc(out / "_spark_metadata" / str(bid), "\n".join(["v1", *lines]))
