"""Batch progress of a driver's queries: a StreamingQueryListener writing completed
batches to the open run's ``events/driver-K.jsonl``, and the ``caught_up`` answer."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def append_event(path: Path, f: str, value: dict[str, Any]) -> None:
    line = json.dumps({"time_ns": time.time_ns(), "f": f, "value": value}, default=str) + "\n"
    fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def batch_summary(progress: dict[str, Any]) -> dict[str, Any]:
    """The parts of a ``StreamingQueryProgress`` JSON the history keeps."""
    source = (progress.get("sources") or [{}])[0]
    return {
        "batch_id": progress.get("batchId"),
        "rows": progress.get("numInputRows"),
        "start": source.get("startOffset"),
        "end": source.get("endOffset"),
        "duration_ms": (progress.get("durationMs") or {}).get("triggerExecution"),
    }


def progress_summary(progress: Any) -> dict[str, Any]:
    """:func:`batch_summary` of a ``StreamingQueryProgress`` object (Spark Connect's
    progress JSON lacks ``numInputRows``: it is taken from the object)."""
    return batch_summary({**json.loads(progress.json), "numInputRows": progress.numInputRows})


class ProgressLog:
    """One StreamingQueryListener per session, writing completed batches to the
    events file of whichever run is open (``events_path``)."""

    def __init__(self) -> None:
        self.events_path: Path | None = None
        self.seen: set[tuple[str, Any]] = set()

    def install(self, spark: SparkSession) -> None:
        from pyspark.sql.streaming.listener import StreamingQueryListener

        log = self

        class Listener(StreamingQueryListener):
            def onQueryStarted(self, event: Any) -> None:
                if log.events_path:
                    append_event(log.events_path, "query_started", {"run_id": str(event.runId)})

            def onQueryProgress(self, event: Any) -> None:
                summary = progress_summary(event.progress)
                if log.events_path:
                    append_event(log.events_path, "batch", summary)
                log.seen.add((str(event.progress.runId), summary["batch_id"]))

            def onQueryIdle(self, event: Any) -> None:
                pass

            def onQueryTerminated(self, event: Any) -> None:
                if log.events_path:
                    append_event(log.events_path, "query_terminated", {"exception": event.exception})

        spark.streams.addListener(Listener())

    def wait_for(self, want: set[tuple[str, Any]], timeout_s: float = 5.0) -> None:
        """Listener events arrive asynchronously: wait (briefly) until every batch
        in ``want`` has been written, so the history stays in order."""
        deadline = time.monotonic() + timeout_s
        while not want <= self.seen and time.monotonic() < deadline:
            time.sleep(0.02)


def caught_up(query: Any, progress: ProgressLog | None) -> dict[str, Any]:
    """The ``caught_up`` answer for a finished query: its batches that read rows. With ``progress``, first
    waits until the listener has written those batches to the events file, so the history stays in order."""
    recent = query.recentProgress
    batches = [progress_summary(p) for p in recent]
    if progress is not None:
        # Idle progress (no rows) reaches listeners as onQueryIdle, not onQueryProgress: wait only for real batches.
        real = [(str(p.runId), b["batch_id"]) for p, b in zip(recent, batches, strict=True) if b["rows"]]
        progress.wait_for(set(real))
    return {"event": "caught_up", "batches": [b for b in batches if b["rows"]]}
