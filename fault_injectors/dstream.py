"""Crash points and steps inside a DStream application's batches.

A DStream scenario's batches are numbered by the rounds whose files they read: the harness gives every file of
round N one modification time just before one batch time (:func:`batch_time_for`), so that batch, and no other,
selects them; the run directory's ``dstream/batches.json`` maps batch times (ms) to round numbers before the files
appear. Empty batches (every batch interval makes one) have no number and fire nothing.

While the harness calls the user's setup function, :func:`patched_foreach_rdd` wraps every ``foreachRDD`` function
(``saveAsTextFiles`` and ``pprint`` go through it too): the first output operation that runs in batch N fires
``dstream.batch.start`` (once its checkpoint file is written; a batch of a restarted context's downtime gets none,
so there the point fires after a 5-s wait, which the ledger records as ``checkpoint_written: false``), and every
function runs under the step machinery (wrapper ``foreach_rdd``), so
``sink.step`` faults land inside the user's own output code. The harness's observer, the last output operation,
fires ``dstream.batch.end`` (:func:`observe`). The wrappers are restored from the checkpoint with the rest of the
DStream graph; they find the run through :data:`RUN_ENV`, which the driver sets before a context starts.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from fault_injectors.crash import FaultSite
from fault_injectors.steps import run_with_steps

#: The run directory of the DStream application this driver runs (set by the driver before a context starts).
RUN_ENV = "HARNESS_DSTREAM_RUN"
#: Under the run directory: round -> batch time, and the observer's record of every batch it saw.
BATCHES_FILE = "dstream/batches.json"
OBSERVED_FILE = "dstream/observed.jsonl"
START_POINT = "dstream.batch.start"
END_POINT = "dstream.batch.end"
WRAPPER = "foreach_rdd"


def time_ms(t: datetime) -> int:
    """A batch time as PySpark hands it to a ``foreachRDD`` function (local naive datetime) -> ms since the epoch."""
    return round(t.timestamp() * 1000)


def batch_time_for(now_ms: int, batch_ms: int, margin_ms: int) -> int:
    """The first batch time (a multiple of ``batch_ms``, as Spark's batch timer keeps them) at least ``margin_ms``
    after ``now_ms``: files whose modification time is that time minus 1 ms are rejected by every earlier batch
    (newer than its time) and selected, all together, by this one."""
    return math.ceil((now_ms + margin_ms) / batch_ms) * batch_ms


def _run_dir() -> Path | None:
    value = os.environ.get(RUN_ENV)
    return Path(value) if value else None


def batch_numbers(run_dir: Path) -> dict[int, int]:
    """Batch time (ms) -> batch number, from ``dstream/batches.json`` (empty before the first round)."""
    path = run_dir / BATCHES_FILE
    if not path.exists():
        return {}
    return {int(b["time_ms"]): int(b["batch"]) for b in json.loads(path.read_text())}


def _site(run_dir: Path) -> FaultSite:
    return FaultSite(run_dir / "faults")


def _call_output(fn: Callable[..., Any], owner: Any, t: datetime, rdd: Any) -> Any:
    run_dir = _run_dir()
    batch = batch_numbers(run_dir).get(time_ms(t)) if run_dir is not None else None
    if run_dir is None or batch is None:
        return fn(t, rdd)
    site = _site(run_dir)
    if site.armed(START_POINT, batch):  # a rule fires once: in the first output operation that runs
        # Spark writes the batch's checkpoint while its jobs run: wait for it, so the point is exact.
        # A batch of a restarted context's downtime gets no checkpoint file of its own: the wait then ends unfulfilled.
        written = _await_checkpoint(run_dir / "checkpoint" / f"checkpoint-{time_ms(t)}")
        site.maybe_fire(START_POINT, batch, time_ms=time_ms(t), checkpoint_written=written)
    return run_with_steps(site, WRAPPER, fn, (t, rdd), batch=batch, owner=owner)


def _await_checkpoint(path: Path, timeout_s: float = 5.0) -> bool:
    """Whether ``path`` appeared within ``timeout_s`` (polled every 10 ms)."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _wrap(func: Callable[..., Any]) -> Callable[[datetime, Any], Any]:
    # PySpark passes (time, rdd) or, to a one-argument function, rdd alone; keep the user's function as the
    # owner, so the steps counted are the calls out of the user's module.
    one = getattr(getattr(func, "__code__", None), "co_argcount", 2) == 1
    fn = (lambda _t, rdd: func(rdd)) if one else func

    def output(t: datetime, rdd: Any) -> Any:
        return _call_output(fn, func, t, rdd)

    return output


@dataclass
class Registered:
    """What a setup function registered while :func:`patched_foreach_rdd` was active."""

    #: The output operations' function names, in order.
    outputs: list[str] = field(default_factory=list)
    #: The directories given to ``textFileStream``.
    directories: list[str] = field(default_factory=list)


@contextlib.contextmanager
def patched_foreach_rdd() -> Iterator[Registered]:
    """While active, every ``DStream.foreachRDD`` registers a wrapped function and every
    ``StreamingContext.textFileStream`` directory is noted; yields what was registered."""
    from pyspark.streaming import DStream, StreamingContext

    original, text_files = DStream.foreachRDD, StreamingContext.textFileStream
    seen = Registered()

    def foreach_rdd(self: Any, func: Callable[..., Any]) -> None:
        seen.outputs.append(getattr(func, "__qualname__", repr(func)))
        original(self, _wrap(func))

    def text_file_stream(self: Any, directory: str) -> Any:
        seen.directories.append(directory)
        return text_files(self, directory)

    DStream.foreachRDD = foreach_rdd  # type: ignore[method-assign]
    StreamingContext.textFileStream = text_file_stream  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        DStream.foreachRDD = original  # type: ignore[method-assign]
        StreamingContext.textFileStream = text_files  # type: ignore[method-assign]


def observe(t: datetime, rdd: Any) -> None:
    """The harness's last output operation over the input directory: record the provenance ranges batch ``t``
    read, then fire ``dstream.batch.end`` (every output operation of the batch has returned)."""
    run_dir = _run_dir()
    if run_dir is None:
        return
    batch = batch_numbers(run_dir).get(time_ms(t))
    keys = rdd.map(_provenance).collect() if batch is not None or not rdd.isEmpty() else []
    if not keys and batch is None:
        return
    ranges: dict[str, list[int]] = {}
    for partition, offset in keys:
        lo, hi = ranges.get(str(partition), [offset, offset + 1])
        ranges[str(partition)] = [min(lo, offset), max(hi, offset + 1)]
    record = {"time_ms": time_ms(t), "batch": batch, "rows": len(keys), "ranges": ranges}
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(run_dir / OBSERVED_FILE, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    if batch is not None:
        _site(run_dir).maybe_fire(END_POINT, batch, time_ms=time_ms(t))


def _provenance(line: str) -> tuple[int, int]:
    row = json.loads(line)
    return int(row["partition"]), int(row["offset"])
