"""Spark's maintenance boundaries: the batches where Spark does more than run the batch, and where exactly-once
bugs it shipped live (a file-sink log compaction, a full state copy). Named from what a checkpoint and a sink's
log hold after a run (:func:`batch_boundaries`), or predicted from batch ids (:func:`compaction_batches`)."""

from __future__ import annotations

import os
from pathlib import Path

from harness.inspector.state import STATE_FILE_NAME

#: Spark's default ``spark.sql.streaming.fileSink.log.compactInterval`` (and the file source's).
COMPACT_INTERVAL = 10
FILE_SINK_COMPACTION = "file-sink log compaction"
STATE_SNAPSHOT = "state snapshot"
#: A fault at ``state.purge``: it hit the maintenance task deleting old state versions, not a batch.
STATE_PURGE = "state retention purge"


def compaction_batches(batches: int, interval: int = COMPACT_INTERVAL) -> list[int]:
    """Batch ids below ``batches`` whose file-sink log entry is a compaction (``N % interval == interval - 1``)."""
    return [n for n in range(interval - 1, batches, interval)]


def batch_boundaries(
    checkpoint: str | os.PathLike[str], sink_dir: str | os.PathLike[str] | None, batch_id: int
) -> list[str]:
    """The boundaries batch ``batch_id`` was: :data:`FILE_SINK_COMPACTION` when the sink's log holds
    ``_spark_metadata/<batch_id>.compact``; :data:`STATE_SNAPSHOT` when a state store holds a full copy at the
    batch's version (``batch_id + 1``) between deltas: an HDFS ``.snapshot``, or a RocksDB ``.zip`` where the store
    also writes changelogs (without changelog checkpointing every version is a ``.zip``, so none is a boundary).
    Unreadable parts count as none."""
    found = []
    if sink_dir is not None and (Path(sink_dir) / "_spark_metadata" / f"{batch_id}.compact").exists():
        found.append(FILE_SINK_COMPACTION)
    state = Path(checkpoint) / "state"
    version = batch_id + 1
    try:
        names = [f.name for f in state.rglob("*") if f.is_file()] if state.is_dir() else []
    except OSError:
        names = []
    # RocksDB without changelog checkpointing uploads a full copy (.zip) at every version: no boundary there.
    changelog = any(name.endswith(".changelog") for name in names)
    for name in names:
        m = STATE_FILE_NAME.match(name)
        kind = m.group(3) if m else None
        if m and int(m.group(1)) == version and (kind == "snapshot" or (kind == "zip" and changelog)):
            found.append(STATE_SNAPSHOT)
            break
    return found
