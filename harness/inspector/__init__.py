"""Spark-free reader and checker of Structured Streaming checkpoints."""

from __future__ import annotations

from harness.inspector.checkpoint import (
    BatchRecord,
    CheckpointError,
    CommitEntry,
    OffsetEntry,
    batch_ids,
    latest_batch_id,
    read_batches,
    read_commit,
    read_offsets,
)

__all__ = [
    "BatchRecord",
    "CheckpointError",
    "CommitEntry",
    "OffsetEntry",
    "batch_ids",
    "latest_batch_id",
    "read_batches",
    "read_commit",
    "read_offsets",
]
