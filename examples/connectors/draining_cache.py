"""BROKEN on purpose: a partition cache that drains itself as it is read.

One bug away from :mod:`examples.connectors.cached_reads`: the cache keeps a
*list* per range and ``read()`` pops rows off it as it yields them ("to free
memory as soon as a row is handed over"). The first read of a range is right;
every later read of the same range in that process finds the entry empty and
returns nothing. Spark reads a range again when it retries a task or replays
a batch in a reused Python worker: that replay is silently empty.

Checks that must catch it: ``read-repeatable`` (the same range read again by a
fresh reader in the same process gives no rows) and ``read-cross-process`` (the
parent's pickled partitions, read in a child after the child read that range
itself, give no rows)::

    python -m harness check-source examples/connectors/draining_cache.py:DrainingCacheSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from examples.connectors.cached_reads import CachedReader, CachedReadsSource, Key
from examples.connectors.jsonl_source import LinePartition


class DrainingReader(CachedReader):
    cache: ClassVar[dict[Key, Any]] = {}

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, LinePartition)
        key = self.key(partition)
        if key not in self.cache:
            self.cache[key] = self.load(partition)  # a list, handed out itself
        rows = self.cache[key]
        while rows:
            yield rows.pop(0)  # BUG: drains the shared entry; the next read of this range gets nothing


class DrainingCacheSource(CachedReadsSource):
    @classmethod
    def name(cls) -> str:
        return "jsonl_draining_cache"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return DrainingReader(self.options)
