"""Correct, and unusual: a read-through cache of partition contents shared by every reader of a process.

The partitioned JSON-lines source of :mod:`examples.connectors.jsonl_source`,
but ``read()`` serves a partition ``(partition, start, end)`` from a
process-wide cache filled on the first read (a worker that reads the same
range again, e.g. a retried task or a replayed batch in a reused Python
worker, does not touch the log again). Lines of a closed range never change
in an append-only log, so the cache may keep them for ever; it holds
immutable tuples and hands out iterators over them, so every read of a range
gives the same rows, in any reader and any process.

It passes every check (``admission-control`` is skipped: the default read limit
is ``ReadAllAvailable``)::

    python -m harness check-source examples/connectors/cached_reads.py:CachedReadsSource \\
        --context examples/connectors/_jsonl.py:log_context

Its broken twin, whose cache hands out its own list and drains it, is
:mod:`examples.connectors.draining_cache`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from examples.connectors._jsonl import read_lines
from examples.connectors.jsonl_source import JsonlSource, JsonlStreamReader, LinePartition

Key = tuple[str, int, int, int]


class CachedReader(JsonlStreamReader):
    #: (log directory, partition, start, end) -> the rows of that range; per process, shared by all readers.
    cache: ClassVar[dict[Key, Any]] = {}

    def load(self, partition: LinePartition) -> list[tuple[Any, ...]]:
        """The rows of ``partition`` from the log."""
        recs = read_lines(self.options["path"], partition.partition, partition.start, partition.end)
        return [(r["partition"], r["line"], r["value"]) for r in recs]

    def key(self, partition: LinePartition) -> Key:
        return (self.options["path"], partition.partition, partition.start, partition.end)

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, LinePartition)
        key = self.key(partition)
        if key not in self.cache:
            self.cache[key] = tuple(self.load(partition))  # immutable: every reader sees the same rows
        return iter(self.cache[key])


class CachedReadsSource(JsonlSource):
    """Format ``jsonl_cached``; options as :class:`~examples.connectors.jsonl_source.JsonlSource`."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_cached"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return CachedReader(self.options)
