"""Crash-injecting wrappers for the two kinds of sink users write.

- :func:`crash_injecting_foreach_batch` wraps a ``foreachBatch`` function:
  ``sink.commit.before`` fires before it runs, ``sink.commit.after`` after it
  returned (the batch is in the sink, Spark's ``commits/N`` is not written).
- :class:`CrashInjectingDataSource` (format ``crash_injecting``) wraps any
  Python ``DataSource`` whose ``streamWriter`` returns a
  ``DataSourceStreamWriter``: option ``inner`` names it as
  ``package.module:ClassName``; every other option except the harness ones
  (``fault_dir``, ``checkpoint``) is passed to it. Its ``write()`` fires
  ``sink.write.start`` / ``sink.write.mid`` (after ``after_rows`` rows) /
  ``sink.write.end``; its driver-side ``commit`` fires ``sink.commit.before``
  and ``sink.commit.after``; ``commit`` and ``abort`` calls are recorded as
  observations (``faults/observations.jsonl``) so tests can see where Spark
  calls them.

Both run the user's code through :func:`fault_injectors.steps.run_with_steps`:
``sink.step`` faults fire just after a step of that code (wrappers
``foreach_batch``, ``write``, ``commit``, ``abort``), and a census records the
steps of every call.

The batch id inside ``write()`` comes from the task's local property
``streaming.sql.batchId``; the task attempt from ``TaskContext.attemptNumber()``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceStreamWriter, WriterCommitMessage

from fault_injectors.crash import FaultSite
from fault_injectors.hold import SINK_TASK_POINTS, hold_for_sibling_fault
from fault_injectors.observe import observe
from fault_injectors.steps import run_with_steps

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

HARNESS_OPTIONS = ("inner", "fault_dir", "checkpoint")


#: The named points :func:`crash_injecting_foreach_batch` fires itself: in the driver's Python process, around
#: the function, before Spark commits the batch.
FOREACH_BATCH_POINTS = ("sink.commit.before", "sink.commit.after")


def crash_injecting_foreach_batch(
    fn: Callable[[DataFrame, int], None], site: FaultSite
) -> Callable[[DataFrame, int], None]:
    """``fn`` with ``sink.commit.before``/``sink.commit.after`` around it and ``sink.step`` inside it."""

    def wrapped(batch_df: DataFrame, batch_id: int) -> None:
        site.maybe_fire("sink.commit.before", batch_id)
        run_with_steps(site, "foreach_batch", fn, (batch_df, batch_id), batch=batch_id)
        site.maybe_fire("sink.commit.after", batch_id)

    wrapped.__name__ = getattr(fn, "__name__", "foreach_batch")
    wrapped.__doc__ = fn.__doc__
    wrapped.__harness_instrumented__ = True  # type: ignore[attr-defined]  # fault_injectors.autowrap
    return wrapped


def load_class(spec: str) -> type[Any]:
    """``package.module:ClassName`` -> the class; ``ValueError`` names what is wrong."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"expected 'package.module:ClassName', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import module {module_name!r} for {spec!r}: {exc}") from exc
    try:
        return getattr(module, attr)  # type: ignore[no-any-return]
    except AttributeError:
        raise ValueError(f"module {module_name!r} has no attribute {attr!r}") from None


def task_identity() -> tuple[int | None, int | None, int | None]:
    """``(batch_id, partition_id, attempt)`` of the current Spark task, or Nones."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return None, None, None
    raw = ctx.getLocalProperty("streaming.sql.batchId")
    return (int(raw) if raw not in (None, "") else None), ctx.partitionId(), ctx.attemptNumber()


def fire_mid_write(
    rows: Iterator[Any], site: FaultSite, batch: int | None, partition: int | None, attempt: int | None
) -> Iterator[Any]:
    """Pass ``rows`` through; fire ``sink.write.mid`` once the armed rule's
    ``after_rows`` rows went by (or at the end, if there were fewer)."""
    rules = site.armed("sink.write.mid", batch, partition)
    if not rules:
        yield from rows
        return
    at = min(r.after_rows or 0 for r in rules)
    n = 0
    for row in rows:
        if n == at:
            site.maybe_fire("sink.write.mid", batch, partition=partition, attempt=attempt, rows=n)
        yield row
        n += 1
    site.maybe_fire("sink.write.mid", batch, partition=partition, attempt=attempt, rows=n)


class CrashInjectingStreamWriter(DataSourceStreamWriter):
    """Delegates to ``inner`` and fires crash points around it."""

    def __init__(self, inner: DataSourceStreamWriter, fault_dir: str | None, checkpoint: str | None) -> None:
        self.inner = inner
        self.fault_dir = fault_dir
        self.checkpoint = checkpoint

    def _site(self) -> FaultSite:
        return FaultSite(self.fault_dir, self.checkpoint)

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        site = self._site()
        batch, partition, attempt = task_identity()
        hold_for_sibling_fault(site, SINK_TASK_POINTS, batch, partition, attempt)
        site.maybe_fire("sink.write.start", batch, partition=partition, attempt=attempt)
        rows = fire_mid_write(iterator, site, batch, partition, attempt)
        message: WriterCommitMessage = run_with_steps(
            site,
            "write",
            self.inner.write,
            (rows,),
            batch=batch,
            partition=partition,
            attempt=attempt,
            owner=self.inner,
        )
        site.maybe_fire("sink.write.end", batch, partition=partition, attempt=attempt)
        return message

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        site = self._site()
        site.maybe_fire("sink.commit.before", batchId)
        run_with_steps(site, "commit", self.inner.commit, (messages, batchId), batch=batchId, owner=self.inner)
        observe(self.fault_dir, "sink_commit", batch=batchId, messages=len(messages))
        site.maybe_fire("sink.commit.after", batchId)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        observe(self.fault_dir, "sink_abort", batch=batchId, messages=sum(m is not None for m in messages))
        run_with_steps(self._site(), "abort", self.inner.abort, (messages, batchId), batch=batchId, owner=self.inner)


class CrashInjectingDataSource(DataSource):
    """Format ``crash_injecting``: wraps the Python sink named by option ``inner``."""

    @classmethod
    def name(cls) -> str:
        return "crash_injecting"

    def _inner(self) -> DataSource:
        spec = self.options.get("inner")
        if not spec:
            raise ValueError("crash_injecting sink: set option 'inner' to 'package.module:DataSourceClass'")
        inner_options = {k: v for k, v in self.options.items() if k.lower() not in HARNESS_OPTIONS}
        return load_class(spec)(inner_options)  # type: ignore[no-any-return]

    def schema(self) -> Any:
        return self._inner().schema()

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        inner = self._inner().streamWriter(schema, overwrite)
        return CrashInjectingStreamWriter(inner, self.options.get("fault_dir"), self.options.get("checkpoint"))
