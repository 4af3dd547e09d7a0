"""A user's ``foreachBatch`` function and ``foreach`` writer get the sink's crash points without wrapping by hand.

While the harness calls a scenario's ``attach_sink`` (:func:`instrumented_writers`), ``DataStreamWriter``'s
``foreachBatch(fn)`` registers ``fn`` wrapped by :func:`fault_injectors.sinks.crash_injecting_foreach_batch`
(``sink.commit.before`` before it runs, ``sink.step`` inside it, ``sink.commit.after`` once it returned), and
``foreach(writer)`` registers a :class:`CrashInjectingForeachWriter` around the writer (an object with
``open``/``process``/``close`` or a function of a row): ``sink.write.start`` before ``open``,
``sink.write.mid`` after a rule's ``after_rows`` rows, ``sink.write.end`` after ``close``, and ``sink.step``
inside each call (wrappers ``foreach_open``, ``foreach_process``, ``foreach_close``), with the epoch (a
micro-batch's batch id) as the batch. What the harness or the user wrapped already
(:data:`INSTRUMENTED`) is registered as it is, so no point fires twice. Classic and Spark Connect writers
alike; DStreams' ``foreachRDD`` has its own (:mod:`fault_injectors.dstream`).
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from fault_injectors.crash import FaultSite
from fault_injectors.steps import run_with_steps

#: Set (true) on a sink function or writer that fires the harness's sink points itself.
INSTRUMENTED = "__harness_instrumented__"
_WRITER_MODULES = ("pyspark.sql.streaming.readwriter", "pyspark.sql.connect.streaming.readwriter")


@dataclass
class Wrapped:
    """What :func:`instrumented_writers` wrapped while it was active: ``"foreachBatch"`` and ``"foreach"``
    once per registration."""

    kinds: list[str] = field(default_factory=list)


def is_instrumented(target: Any) -> bool:
    return bool(getattr(target, INSTRUMENTED, False))


class CrashInjectingForeachWriter:
    """A ``foreach`` writer around the user's (pickled to the tasks; see the module docstring)."""

    __harness_instrumented__ = True

    def __init__(self, inner: Any, fault_dir: str, checkpoint: str) -> None:
        self.inner, self.fault_dir, self.checkpoint = inner, fault_dir, checkpoint

    def _call(self, wrapper: str, name: str, *args: Any) -> Any:
        method: Callable[..., Any] | None = getattr(self.inner, name, None)
        if method is None:
            return True if name == "open" else None  # a writer without open/close: Spark's defaults
        owner = self.inner if callable(getattr(self.inner, "process", None)) else method
        return run_with_steps(
            self.site, wrapper, method, args, batch=self.epoch, partition=self.partition, owner=owner
        )

    def open(self, partition_id: int, epoch_id: int) -> Any:
        self.partition, self.epoch, self.rows = partition_id, epoch_id, 0
        self.site = FaultSite(self.fault_dir or None, self.checkpoint or None)
        rules = self.site.armed("sink.write.mid", epoch_id, partition_id)
        self.mid_at = min((r.after_rows or 0) for r in rules) if rules else None
        self.site.maybe_fire("sink.write.start", epoch_id, partition=partition_id)
        # Spark processes the partition only when open's value is true: the user's value, as it is.
        return self._call("foreach_open", "open", partition_id, epoch_id)

    def process(self, row: Any) -> None:
        if self.rows == self.mid_at:
            self.site.maybe_fire("sink.write.mid", self.epoch, partition=self.partition, rows=self.rows)
        if callable(getattr(self.inner, "process", None)):
            self._call("foreach_process", "process", row)
        else:  # a function of a row
            run_with_steps(
                self.site, "foreach_process", self.inner, (row,), batch=self.epoch, partition=self.partition
            )
        self.rows += 1

    def close(self, error: BaseException | None) -> None:
        self._call("foreach_close", "close", error)
        if error is None:
            if self.mid_at is not None:
                self.site.maybe_fire("sink.write.mid", self.epoch, partition=self.partition, rows=self.rows)
            self.site.maybe_fire("sink.write.end", self.epoch, partition=self.partition)


@contextlib.contextmanager
def instrumented_writers(site: FaultSite) -> Iterator[Wrapped]:
    """While active, ``foreachBatch`` and ``foreach`` of every ``DataStreamWriter`` class register the
    user's sink wrapped (see the module); yields what was wrapped."""
    from fault_injectors.sinks import crash_injecting_foreach_batch

    seen = Wrapped()
    fault_dir = str(site.dir) if site.dir is not None else ""
    checkpoint = str(site.checkpoint) if site.checkpoint is not None else ""
    patched: list[tuple[type, str, Any]] = []

    def patch(cls: type) -> None:
        foreach_batch, foreach = cls.foreachBatch, cls.foreach  # type: ignore[attr-defined]

        def wrapped_foreach_batch(self: Any, func: Any) -> Any:
            if not is_instrumented(func):
                seen.kinds.append("foreachBatch")
                func = crash_injecting_foreach_batch(func, site)
            return foreach_batch(self, func)

        def wrapped_foreach(self: Any, f: Any) -> Any:
            # What Spark would refuse (no process, not callable) reaches it unwrapped, to be refused as usual.
            if not is_instrumented(f) and (callable(f) or hasattr(f, "process")):
                seen.kinds.append("foreach")
                f = CrashInjectingForeachWriter(f, fault_dir, checkpoint)
            return foreach(self, f)

        patched.extend([(cls, "foreachBatch", foreach_batch), (cls, "foreach", foreach)])
        cls.foreachBatch = wrapped_foreach_batch  # type: ignore[attr-defined]
        cls.foreach = wrapped_foreach  # type: ignore[attr-defined]

    for module_name in _WRITER_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # Spark Connect's client libraries are optional
            continue
        patch(module.DataStreamWriter)
    try:
        yield seen
    finally:
        for cls, name, original in reversed(patched):
            setattr(cls, name, original)


class _RecordingWriter:
    """Stands in for a ``DataStreamWriter``: records ``foreachBatch``/``foreach`` registrations, accepts any
    other call (``format``, ``option``, ``outputMode``, ...) and returns itself for chaining."""

    def __init__(self) -> None:
        self.unwrapped: list[str] = []

    def foreachBatch(self, func: Any) -> _RecordingWriter:
        if not is_instrumented(func):
            self.unwrapped.append("foreachBatch")
        return self

    def foreach(self, f: Any) -> _RecordingWriter:
        if not is_instrumented(f) and (callable(f) or hasattr(f, "process")):
            self.unwrapped.append("foreach")
        return self

    def __getattr__(self, name: str) -> Callable[..., _RecordingWriter]:
        return lambda *args, **kwargs: self


def registers_unwrapped_sink(attach_sink: Callable[[Any, Any], Any], ctx: Any) -> bool:
    """Whether ``attach_sink(writer, ctx)`` registers a ``foreachBatch`` function or ``foreach`` writer the
    harness will wrap (:func:`instrumented_writers`): then chaos campaigns draw ``sink.step`` faults inside it.
    Called once on a recording writer; an ``attach_sink`` that raises there counts as ``False``."""
    writer = _RecordingWriter()
    try:
        attach_sink(writer, ctx)
    except Exception:  # it needs a real writer or resource: decided by the scenario's own setting
        return False
    return bool(writer.unwrapped)
