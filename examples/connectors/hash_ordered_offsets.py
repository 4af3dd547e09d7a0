"""BROKEN on purpose: offsets whose key order depends on the hash seed.

Bug: the reader keeps its partition names in a ``set`` and builds offsets by
iterating over it. Equal offsets then serialise to different JSON text in
processes with different ``PYTHONHASHSEED`` (a restarted driver, the commit
process), and Spark compares offsets as text: it sees "new data" that is not
there, or a batch whose end never matches.

Check that must catch it: ``offsets-canonical`` (its cross-process comparison).

    python -m harness check-source examples/connectors/hash_ordered_offsets.py:HashOrderedOffsetsSource \\
        --context examples/connectors/hash_ordered_offsets.py:six_shard_context
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit

from examples.connectors._jsonl import LogContext
from examples.connectors.jsonl_source import JsonlSource, JsonlStreamReader, LinePartition, available

NAMES = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")


def six_shard_context(workdir: Path) -> LogContext:
    """The JSON-lines log with six partitions (one per shard name)."""
    return LogContext(workdir, partitions=len(NAMES))


class HashOrderedReader(JsonlStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options)
        self.names = {NAMES[p] for p in available(self.options)}  # BUG: set order depends on the hash seed

    def _offset(self, counts: Mapping[int, int]) -> dict[str, int]:
        return {name: int(counts[NAMES.index(name)]) for name in self.names}

    def initialOffset(self) -> dict[str, int]:
        return self._offset({p: 0 for p in available(self.options)})

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        return self._offset(available(self.options))

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        return [
            LinePartition(NAMES.index(n), int(start.get(n, 0)), int(e))
            for n, e in end.items()
            if int(e) > int(start.get(n, 0))
        ]


class HashOrderedOffsetsSource(JsonlSource):
    @classmethod
    def name(cls) -> str:
        return "jsonl_hash_ordered"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return HashOrderedReader(self.options)
