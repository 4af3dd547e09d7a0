"""BROKEN on purpose: partitions that treat the end offset as inclusive.

Bug: ``partitions(start, end)`` plans lines ``[start, end]`` instead of
``[start, end)``, so the boundary line of two consecutive batches is read by
both (and an empty range ``[b, b)`` still returns a row). Under Spark every
batch boundary duplicates one row per partition.

Check that must catch it: ``ranges-contiguous`` ([a,b) + [b,c) != [a,c)).

    python -m harness check-source examples/connectors/overlapping_partitions.py:OverlappingPartitionsSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from examples.connectors._jsonl import line_count, read_lines
from examples.connectors.jsonl_source import JsonlSource, JsonlStreamReader, LinePartition


class OverlappingReader(JsonlStreamReader):
    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        # BUG: "+ 1" makes the end inclusive; the next batch starts at the same line.
        return [LinePartition(int(p), int(start.get(p, 0)), int(e) + 1) for p, e in end.items()]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, LinePartition)
        root = self.options["path"]
        end = min(partition.end, line_count(root, partition.partition))
        for rec in read_lines(root, partition.partition, partition.start, end):
            yield (rec["partition"], rec["line"], rec["value"])


class OverlappingPartitionsSource(JsonlSource):
    @classmethod
    def name(cls) -> str:
        return "jsonl_overlapping"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return OverlappingReader(self.options)
