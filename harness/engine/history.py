"""The run history: one JSON object per line in ``history.jsonl``.

Event fields (Jepsen-style): ``index`` (0, 1, ...), ``time_ns`` (wall clock),
``type`` (``invoke`` | ``ok`` | ``fail`` | ``info``; ``info`` means the
outcome is unknown, e.g. a batch cut short by a crash), ``process`` (``runner``
or ``driver-<k>``, the k-th driver incarnation), ``f`` (what happened:
``add_data``, ``start_driver``, ``run``, ``batch``, ``kill``, ``crash``, ...)
and ``value`` (details). Only the runner writes this file, so indices are
dense and ordered.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

TYPES = ("invoke", "ok", "fail", "info")


@dataclass(frozen=True)
class Event:
    index: int
    time_ns: int
    type: str
    process: str
    f: str
    value: dict[str, Any]


class History:
    """Append-only writer (and in-memory copy) of a run's history."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.events: list[Event] = []
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def append(
        self, type: str, process: str, f: str, value: dict[str, Any] | None = None, time_ns: int | None = None
    ) -> Event:
        if type not in TYPES:
            raise ValueError(f"history event type must be one of {TYPES}, got {type!r}")
        event = Event(len(self.events), time_ns or time.time_ns(), type, process, f, dict(value or {}))
        self._fh.write(json.dumps(asdict(event), sort_keys=True, default=str) + "\n")
        self._fh.flush()
        self.events.append(event)
        return event

    def close(self) -> None:
        self._fh.close()

    def of(self, f: str) -> Iterator[Event]:
        return (e for e in self.events if e.f == f)


def read_history(path: str | os.PathLike[str]) -> list[Event]:
    """Events of a ``history.jsonl``; a torn last line is ignored."""
    events = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            events.append(Event(**json.loads(line)))
        except (json.JSONDecodeError, TypeError):
            continue
    return events


def read_jsonl_from(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    """Complete JSON lines of ``path`` from byte ``offset``; returns them and the
    offset after the last complete line (a torn tail is left for later)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1
    records = []
    for line in data[:end].splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records, offset + end
