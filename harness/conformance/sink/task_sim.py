"""Playing Spark's side of the ``DataSourceStreamWriter`` protocol without Spark.

Spark calls ``streamWriter(schema, overwrite)`` on the driver, pickles the
writer to every write task, calls ``write(iterator)`` there with a
``TaskContext`` whose local property ``streaming.sql.batchId`` names the
batch, pickles the returned commit messages back, and calls
``commit(messages, batchId)`` (or ``abort``) on an unpickled copy in another
Python process. :class:`WriterSim` does the same in-process: every task and
every commit gets a cloudpickle round trip of the writer and the messages,
and ``TaskContext.get()`` returns a task context with the batch id, partition,
attempt number and task attempt id the check chooses (so a writer keyed on the
task attempt id instead of the batch id can be caught).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pyspark import TaskContext, cloudpickle
from pyspark.sql import Row
from pyspark.sql import types as T

from harness.errors import Observed

#: The rows every sink check writes: the replayable source's integer columns.
SCHEMA = T.StructType(
    [
        T.StructField("partition", T.IntegerType()),
        T.StructField("offset", T.LongType()),
        T.StructField("seq", T.IntegerType()),
        T.StructField("key", T.IntegerType()),
        T.StructField("value", T.LongType()),
    ]
)
COLUMNS = tuple(f.name for f in SCHEMA.fields)
ROWS_PER_TASK = 10


class TaskFailure(Observed, RuntimeError):
    """Raised by a simulated task's input iterator (a task attempt dying mid-write)."""


def batch_rows(batch_id: int, partition: int, seed: int = 11) -> list[dict[str, int]]:
    """Deterministic rows of one task of a batch (replayable-source rows, integer columns)."""
    from scenarios.rowgen import SourceConfig

    cfg = SourceConfig(seed=seed, partitions=2)
    start = batch_id * ROWS_PER_TASK
    return [dict(zip(COLUMNS, r[:5], strict=True)) for r in cfg.rows(partition, start, start + ROWS_PER_TASK)]


def roundtrip(obj: Any) -> Any:
    """What crossing a process boundary does to ``obj`` (Spark uses cloudpickle)."""
    dumps: Callable[[Any], bytes] = cloudpickle.dumps  # pyspark's vendored cloudpickle has no annotations
    return cloudpickle.loads(dumps(obj))


def _rows(rows: Sequence[Mapping[str, Any]], fail_after: int | None) -> Iterator[Row]:
    for n, r in enumerate(rows):
        if fail_after is not None and n == fail_after:
            raise TaskFailure(f"simulated task failure after {n} rows")
        yield Row(**r)


class WriterSim:
    """One query's writer (``streamWriter`` of a fresh ``DataSource(options)``)."""

    def __init__(self, source_cls: type[Any], options: Mapping[str, str]) -> None:
        from pyspark.sql.datasource import CaseInsensitiveDict

        ds = source_cls(CaseInsensitiveDict(dict(options)))
        self.writer = ds.streamWriter(SCHEMA, False)

    def task(
        self,
        batch_id: int,
        partition: int,
        *,
        attempt: int = 0,
        task_attempt_id: int | None = None,
        rows: Sequence[Mapping[str, Any]] | None = None,
        fail_after: int | None = None,
    ) -> Any:
        """One write task attempt; returns its (round-tripped) commit message.
        With ``fail_after`` the input iterator raises :class:`TaskFailure` after
        that many rows and the exception propagates (Spark would retry the task)."""
        rows = batch_rows(batch_id, partition) if rows is None else rows
        tid = task_attempt_id if task_attempt_id is not None else batch_id * 10 + partition
        writer = roundtrip(self.writer)
        # Set as the private attributes every PySpark release reads (4.2 also takes them as keyword
        # arguments; 4.1 and earlier take none).
        fields: dict[str, Any] = {
            "stageId": batch_id,
            "partitionId": partition,
            "attemptNumber": attempt,
            "taskAttemptId": tid,
            "localProperties": {"streaming.sql.batchId": str(batch_id)},
            "cpus": 1,
            "resources": {},
        }
        ctx = object.__new__(TaskContext)
        for name, value in fields.items():
            setattr(ctx, f"_{name}", value)
        TaskContext._setTaskContext(ctx)
        try:
            return roundtrip(writer.write(_rows(rows, fail_after)))
        finally:
            no_context: Any = None  # what Spark's worker leaves after a task (its annotation says TaskContext)
            TaskContext._setTaskContext(no_context)

    def tasks(self, batch_id: int, partitions: int = 2, **kw: Any) -> list[Any]:
        return [self.task(batch_id, p, **kw) for p in range(partitions)]

    def commit(self, messages: Sequence[Any], batch_id: int) -> None:
        roundtrip(self.writer).commit(list(messages), batch_id)

    def abort(self, messages: Sequence[Any], batch_id: int) -> None:
        roundtrip(self.writer).abort(list(messages), batch_id)


def expected_rows(*batch_ids: int, partitions: int = 2) -> list[dict[str, int]]:
    return [r for b in batch_ids for p in range(partitions) for r in batch_rows(b, p)]
