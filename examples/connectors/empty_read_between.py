"""BROKEN on purpose: a simple reader whose readBetweenOffsets returns nothing.

Bug: ``read(start)`` works, but ``readBetweenOffsets(start, end)`` - which Spark
calls to re-read a batch after a failure or restart - returns an empty
iterator. Every batch replayed after a crash is silently lost.

Check that must catch it: ``read-between-offsets`` (also ``ranges-contiguous``,
which reads ranges the way a replay does).

    python -m harness check-source examples/connectors/empty_read_between.py:EmptyReadBetweenSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import SimpleDataSourceStreamReader

from examples.connectors.jsonl_source import (
    JsonlSimpleReader,
    JsonlSimpleSource,
    admit,
    available,
    read_lines,
    to_offset,
)


class EmptyReplayReader(JsonlSimpleReader):
    def read(self, start: dict[str, int]) -> tuple[Iterator[tuple[Any, ...]], dict[str, int]]:
        end = to_offset(admit({int(k): int(v) for k, v in start.items()}, available(self.options), None))
        rows = [
            (rec["partition"], rec["line"], rec["value"])
            for p, e in end.items()
            for rec in read_lines(self.options["path"], int(p), int(start.get(p, 0)), int(e))
        ]
        return iter(rows), end

    def readBetweenOffsets(self, start: dict[str, int], end: dict[str, int]) -> Iterator[tuple[Any, ...]]:
        return iter([])  # BUG: "replays are rare, fill in later"


class EmptyReadBetweenSource(JsonlSimpleSource):
    @classmethod
    def name(cls) -> str:
        return "jsonl_empty_replay"

    def simpleStreamReader(self, schema: Any) -> SimpleDataSourceStreamReader:
        return EmptyReplayReader(self.options)
