"""Spark's Kafka source offsets in a checkpoint, read without Spark: ``offsets/N`` holds
``{"topic": {"partition": offset}}`` per batch, ``sources/<n>/0`` the offsets the source started from.
Pure functions (the verdict and the inspector read checkpoints with them)."""

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
