"""Correct, and unusual: a source whose data arrives by itself, like Spark's ``rate`` source.

Rows arrive with the clock: ``rowsPerSecond`` rows per second since the instant
``startMs`` (milliseconds since the epoch). Row ``n`` is ``(n, startMs + n *
1000 // rowsPerSecond)``. Offsets are ``{"rows": n}``; ``latestOffset`` grows on
every call, ``read()`` is a pure function of the range. Spark's ``rate`` source
keeps its start instant in its checkpoint; this one takes it as an option, so a
reader created after a restart counts from the same instant.

It passes every check without a context (``latest-offset-stable`` may warn that
the data arrives by itself; ``admission-control`` is skipped: its default read
limit is ``ReadAllAvailable``, so Spark never limits it)::

    python -m harness check-source examples/connectors/rate_like_source.py:RateLikeSource \\
        --option startMs=$(date +%s%3N)

Its broken twin is :mod:`examples.connectors.counts_from_zero`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit

SCHEMA = "value BIGINT, ts_ms BIGINT"


class RowRange(InputPartition):
    """Rows ``[start, end)``."""

    def __init__(self, start: int, end: int) -> None:
        super().__init__((start, end))
        self.start, self.end = start, end


class RateLikeReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        if "startMs" not in options:
            raise ValueError(
                "RateLikeSource needs the option startMs (the instant its rows start, ms since the epoch), "
                "the same in every reader: e.g. --option startMs=$(date +%s%3N)"
            )
        self.start_ms, self.per_s = int(options["startMs"]), int(options.get("rowsPerSecond", "10"))

    def initialOffset(self) -> dict[str, int]:
        return {"rows": 0}

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        arrived = (time.time_ns() // 1_000_000 - self.start_ms) * self.per_s // 1000
        return {"rows": max(int(start["rows"]), arrived)}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        return [RowRange(int(start["rows"]), int(end["rows"]))] if end["rows"] > start["rows"] else []

    def read(self, partition: InputPartition) -> Iterator[tuple[int, int]]:
        assert isinstance(partition, RowRange)
        for n in range(partition.start, partition.end):
            yield (n, self.start_ms + n * 1000 // self.per_s)


class RateLikeSource(DataSource):
    """Format ``rate_like``."""

    @classmethod
    def name(cls) -> str:
        return "rate_like"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return RateLikeReader(self.options)
