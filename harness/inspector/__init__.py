"""Spark-free reader and checker of Structured Streaming checkpoints.

Entry points: :func:`inspect_checkpoint` (a typed report with ``.violations``),
:func:`summarize` (short text for run reports, never raises), the low-level
parsers (:func:`read_offsets`, :func:`read_commit`, :func:`read_batches`, ...)
and ``python -m harness inspect``. See docs/inspector.md.
"""

from __future__ import annotations

from harness.inspector.boundaries import COMPACT_INTERVAL, batch_boundaries, compaction_batches
from harness.inspector.checkpoint import (
    BatchRecord,
    CheckpointError,
    CommitEntry,
    OffsetEntry,
    QueryMetadata,
    batch_ids,
    latest_batch_id,
    read_batches,
    read_commit,
    read_metadata,
    read_offsets,
)
from harness.inspector.crc import ChecksumResult, ChecksumScan, scan_tree
from harness.inspector.diff import CheckpointDiff, Snapshot, diff_snapshots, load_snapshot, render_diff
from harness.inspector.findings import INVARIANTS, Finding
from harness.inspector.inspection import InspectionReport, inspect_checkpoint, run_checks, summarize
from harness.inspector.load import CheckpointModel, load_checkpoint
from harness.inspector.render import render_text, report_json
from harness.inspector.sinklog import CompactibleLog, SinkState, read_log, read_sink, read_source_logs
from harness.inspector.state import StateOperator, StateStore, read_state
from harness.inspector.timeline import TimelineRow, build_timeline

__all__ = [
    "COMPACT_INTERVAL",
    "INVARIANTS",
    "BatchRecord",
    "CheckpointDiff",
    "CheckpointError",
    "CheckpointModel",
    "ChecksumResult",
    "ChecksumScan",
    "CommitEntry",
    "CompactibleLog",
    "Finding",
    "InspectionReport",
    "OffsetEntry",
    "QueryMetadata",
    "SinkState",
    "Snapshot",
    "StateOperator",
    "StateStore",
    "TimelineRow",
    "batch_boundaries",
    "batch_ids",
    "build_timeline",
    "compaction_batches",
    "diff_snapshots",
    "inspect_checkpoint",
    "latest_batch_id",
    "load_checkpoint",
    "load_snapshot",
    "read_batches",
    "read_commit",
    "read_log",
    "read_metadata",
    "read_offsets",
    "read_sink",
    "read_source_logs",
    "read_state",
    "render_diff",
    "render_text",
    "report_json",
    "run_checks",
    "scan_tree",
    "summarize",
]
