"""Spark's Kafka source offsets in a checkpoint, read without Spark: ``offsets/N`` holds
``{"topic": {"partition": offset}}`` per batch, ``sources/<n>/0`` the offsets the source started from.
Pure functions (the verdict and the inspector read checkpoints with them), and the ranges of a topic the
oracle reads back or regenerates (:meth:`scenarios.kafka.KafkaTopic.batch`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def kafka_offsets(raw: Any, topic: str) -> dict[int, int] | None:
    """``{partition: offset}`` of ``topic`` in a Kafka source offset (``{"topic": {"0": 12}}``); ``None`` when
    ``raw`` is not one."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get(topic), Mapping):
        return None
    try:
        return {int(p): int(o) for p, o in raw[topic].items()}
    except (TypeError, ValueError):
        return None


def initial_offsets(checkpoint: str | Path, source: int = 0) -> Any:
    """What Spark's Kafka source number ``source`` recorded as its start (``sources/<source>/0``: a version line,
    then JSON), or ``None``."""
    path = Path(checkpoint) / "sources" / str(source) / "0"
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return None
    # Spark writes a zero byte first (SPARK-19517), then "v1", a newline and the JSON.
    head, _, body = text.lstrip("\x00").partition("\n")
    body = body.strip() if head.startswith("v") else text.lstrip("\x00").strip()
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


def committed_window(checkpoint: str | Path, topic: str) -> tuple[dict[int, int], dict[int, int]]:
    """``(start, end)`` per partition of what the committed batches cover: ``start`` as Spark's Kafka source
    recorded it (``sources/0/0``; a partition missing there starts at 0), ``end`` from the newest committed
    ``offsets/N`` (``{}`` before any commit)."""
    from harness.inspector import batch_ids, read_offsets

    start = kafka_offsets(initial_offsets(checkpoint), topic) or {}
    ids = batch_ids(Path(checkpoint) / "commits")
    end = (kafka_offsets(read_offsets(checkpoint, ids[-1]).sources[0], topic) or {}) if ids else {}
    return start, end


def oracle_ranges(checkpoint: str | Path, topic: str, log_start: Mapping[int, int]) -> dict[int, tuple[int, int]]:
    """Per partition ``[start, end)`` of the records the committed batches cover that the broker still holds:
    ``start`` from ``sources/0/0`` (a partition it lacks: 0), raised to the log start offset ``log_start``;
    ``end`` from the newest committed batch's ``offsets/N``."""
    start, end = committed_window(checkpoint, topic)
    first = {p: max(start.get(p, 0), log_start.get(p, 0)) for p in end}
    return {p: (first[p], e) for p, e in end.items() if e > first[p]}


def aged_out_ranges(checkpoint: str | Path, topic: str, log_start: Mapping[int, int]) -> dict[int, tuple[int, int]]:
    """Per partition ``[start, end)`` of the records the committed batches cover that the broker deleted (below
    its log start offset): the oracle regenerates them, so a query that skipped them shows them lost."""
    start, end = committed_window(checkpoint, topic)
    gone = {p: (start.get(p, 0), min(log_start.get(p, 0), e)) for p, e in end.items()}
    return {p: (s, e) for p, (s, e) in gone.items() if e > s}
