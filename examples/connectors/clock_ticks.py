"""Correct, and unusual: a clock-driven source that starts at "now", like Kafka's ``startingOffsets=latest``.

Time is cut into ticks of ``tickMs`` milliseconds (default 200); tick ``t``
holds ``rowsPerTick`` rows (default 5) ``(t, i, value(t, i))``, a pure function
of ``(t, i)``. Offsets are ``{"tick": t}``. ``initialOffset()`` is the current
tick, so a query starts with what arrives from then on (readers created at
different instants start at different ticks; Spark logs the one it used before
the first batch and never asks again), and ``latestOffset(start)`` is the
current tick, never behind ``start``. ``read()`` of ``[a, b)`` is the rows of
ticks ``a .. b-1``: the same in every process and on every replay.

Contract it meets: offsets never go back, ranges replay exactly. Habits the
checks notice (never failures): ``initial-offset-stable`` is a ``note``
(another process, started later, starts at a later tick);
``latest-offset-stable`` passes or notes a tick that passed during the probe,
and the Spark-free reads may compare zero rows (skipped) when the probe ran
within one tick. ``end-to-end`` holds: its oracle starts at the initial offset
Spark logged::

    python -m harness check-source examples/connectors/clock_ticks.py:ClockTicksSource
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit

SCHEMA = "tick BIGINT, i INT, value BIGINT"


def value_of(tick: int, i: int) -> int:
    """Payload of row ``i`` of ``tick`` (a pure function: no clock, no randomness)."""
    return (tick * 1_000_003 + i * 7_919) % 999_999_937


class TickRange(InputPartition):
    """Ticks ``[start, end)``."""

    def __init__(self, start: int, end: int) -> None:
        super().__init__((start, end))
        self.start, self.end = start, end


class ClockTicksReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.tick_ms = int(options.get("tickMs", "200"))
        self.per_tick = int(options.get("rowsPerTick", "5"))
        if self.tick_ms <= 0 or self.per_tick < 0:
            raise ValueError(f"ClockTicksSource: tickMs must be > 0 and rowsPerTick >= 0 ({dict(options)})")

    def now(self) -> int:
        """The current tick."""
        return time.time_ns() // 1_000_000 // self.tick_ms

    def initialOffset(self) -> dict[str, int]:
        return {"tick": self.now()}

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        return {"tick": max(self.now(), int(start["tick"]))}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        s, e = int(start["tick"]), int(end["tick"])
        return [TickRange(s, e)] if e > s else []

    def read(self, partition: InputPartition) -> Iterator[tuple[int, int, int]]:
        assert isinstance(partition, TickRange)
        for t in range(partition.start, partition.end):
            for i in range(self.per_tick):
                yield (t, i, value_of(t, i))


class ClockTicksSource(DataSource):
    """Format ``clock_ticks``; options ``tickMs``, ``rowsPerTick``."""

    @classmethod
    def name(cls) -> str:
        return "clock_ticks"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return ClockTicksReader(self.options)
