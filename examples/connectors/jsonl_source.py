"""Correct streaming sources over the JSON-lines log (:mod:`examples.connectors._jsonl`).

- :class:`JsonlSource` (format ``jsonl_log``): a ``DataSourceStreamReader``
  with one input partition per log partition, offsets ``{"0": n0, "1": n1}``
  (keys in partition order), admission control through ``ReadMaxRows``
  (option ``max_rows_per_batch``) and ``Trigger.AvailableNow``.
- :class:`JsonlSimpleSource` (format ``jsonl_log_simple``): the same data
  through a ``SimpleDataSourceStreamReader``.

Both pass every conformance check::

    python -m harness check-source examples/connectors/jsonl_source.py:JsonlSource \\
        --context examples/connectors/_jsonl.py:log_context

The broken examples next to this file each change one method of these.
Options: ``path`` (the log directory) and ``partitions`` (both set by the
context), ``max_rows_per_batch`` (optional).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    InputPartition,
    SimpleDataSourceStreamReader,
)
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow

from examples.connectors._jsonl import SCHEMA, line_count, read_lines


class LinePartition(InputPartition):
    """Lines ``[start, end)`` of one log partition."""

    def __init__(self, partition: int, start: int, end: int) -> None:
        super().__init__((partition, start, end))
        self.partition, self.start, self.end = partition, start, end


def available(options: Mapping[str, str]) -> dict[int, int]:
    """Lines in every partition's log right now."""
    return {p: line_count(options["path"], p) for p in range(int(options.get("partitions", "2")))}


def to_offset(ends: Mapping[int, int]) -> dict[str, int]:
    """Offsets with keys in partition order, so equal offsets serialise identically."""
    return {str(p): int(ends[p]) for p in sorted(ends)}


def admit(start: Mapping[int, int], avail: Mapping[int, int], max_rows: int | None) -> dict[int, int]:
    """End of the next batch from ``start``: everything, or at most ``max_rows`` lines in total."""
    end = {p: max(start.get(p, 0), n) for p, n in avail.items()}
    if max_rows is None:
        return end
    out, budget = {p: start.get(p, 0) for p in end}, max_rows
    while budget > 0 and any(out[p] < end[p] for p in end):
        for p in sorted(end):
            if budget and out[p] < end[p]:
                out[p] += 1
                budget -= 1
    return out


class JsonlStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)
        self.target: dict[int, int] | None = None

    def initialOffset(self) -> dict[str, int]:
        return to_offset({p: 0 for p in available(self.options)})

    def getDefaultReadLimit(self) -> ReadLimit:
        raw = self.options.get("max_rows_per_batch")
        return ReadMaxRows(int(raw)) if raw else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = available(self.options)

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        avail = self.target if self.target is not None else available(self.options)
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return to_offset(admit({int(k): int(v) for k, v in start.items()}, avail, max_rows))

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        return [
            LinePartition(int(p), int(start.get(p, 0)), int(e)) for p, e in end.items() if int(e) > int(start.get(p, 0))
        ]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, LinePartition)
        root = self.options["path"]
        for rec in read_lines(root, partition.partition, partition.start, partition.end):
            yield (rec["partition"], rec["line"], rec["value"])


class JsonlSource(DataSource):
    """Format ``jsonl_log``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_log"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return JsonlStreamReader(self.options)


class JsonlSimpleReader(SimpleDataSourceStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = dict(options)

    def initialOffset(self) -> dict[str, int]:
        return to_offset({p: 0 for p in available(self.options)})

    def read(self, start: dict[str, int]) -> tuple[Iterator[tuple[Any, ...]], dict[str, int]]:
        end = to_offset(admit({int(k): int(v) for k, v in start.items()}, available(self.options), None))
        return self.readBetweenOffsets(start, end), end

    def readBetweenOffsets(self, start: dict[str, int], end: dict[str, int]) -> Iterator[tuple[Any, ...]]:
        rows = []
        for p, e in end.items():
            for rec in read_lines(self.options["path"], int(p), int(start.get(p, 0)), int(e)):
                rows.append((rec["partition"], rec["line"], rec["value"]))
        return iter(rows)


class JsonlSimpleSource(DataSource):
    """Format ``jsonl_log_simple``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_log_simple"

    def schema(self) -> str:
        return SCHEMA

    def simpleStreamReader(self, schema: Any) -> SimpleDataSourceStreamReader:
        return JsonlSimpleReader(self.options)
