"""Correct, and unusual: data that arrives by itself, a fixed step per ``latestOffset`` call.

A counter source like Spark's ``rate-micro-batch`` (which advances a fixed
number of rows per batch): the reader keeps the offset it last reported, and
every ``latestOffset(start, limit)`` call reports ``{"n": max(last, start["n"])
+ step}`` and remembers it. The next offset is never behind ``start``, so a
reader created after a restart counts on from the checkpointed offset Spark
gives it. Row ``n`` is ``(n, mix(n))``: ``read()`` is a pure function of the
range, the same in every process.

Contract it meets: ``latestOffset(start) >= start`` in every reader, ranges
``[a, b)`` read the same rows everywhere. Habit the checks notice (never a
failure): ``latest-offset-stable`` is a ``note``: two calls (or two readers)
disagree although no context added data, because data arrives per call.
Everything else passes or is skipped (no context feeds it; the default read
limit is ``ReadAllAvailable``, so ``admission-control`` is skipped). The
context-less ``end-to-end`` (4 batches per query, a SIGKILL in batch 3) holds::

    python -m harness check-source examples/connectors/per_call_counter.py:PerCallCounterSource

Option ``step`` (default 10): rows per call. Its broken twin, which counts from
zero in each new reader, is :mod:`examples.connectors.per_call_counter_from_zero`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit

SCHEMA = "n BIGINT, mixed BIGINT"


def mix(n: int) -> int:
    """The payload of row ``n``: a multiplicative hash (a pure function, no randomness)."""
    return (n * 2_654_435_761 + 97) % 1_000_000_007


class CounterRange(InputPartition):
    """Rows ``[start, end)`` of the counter."""

    def __init__(self, start: int, end: int) -> None:
        super().__init__((start, end))
        self.start, self.end = start, end


class PerCallCounterReader(DataSourceStreamReader):
    """Offsets ``{"n": rows}``; each ``latestOffset`` call adds ``step`` rows to ``max(last, start)``."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.step = int(options.get("step", "10"))
        if self.step <= 0:
            raise ValueError(f"PerCallCounterSource: option step must be positive, got {self.step}")
        self.last = 0  # the offset this reader reported last

    def initialOffset(self) -> dict[str, int]:
        return {"n": 0}

    def next_end(self, start: Mapping[str, Any]) -> int:
        """The end this call reports: from the later of this reader's last answer and Spark's ``start``."""
        return max(self.last, int(start["n"])) + self.step

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        self.last = self.next_end(start)
        return {"n": self.last}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        s, e = int(start["n"]), int(end["n"])
        return [CounterRange(s, e)] if e > s else []

    def read(self, partition: InputPartition) -> Iterator[tuple[int, int]]:
        assert isinstance(partition, CounterRange)
        for n in range(partition.start, partition.end):
            yield (n, mix(n))


class PerCallCounterSource(DataSource):
    """Format ``per_call_counter``; option ``step``."""

    @classmethod
    def name(cls) -> str:
        return "per_call_counter"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return PerCallCounterReader(self.options)
