"""BROKEN on purpose: latestOffset counts arrivals since the reader started.

Bug: the reader remembers how long each log was when it was created and
reports "lines that arrived since then" as the offset, like a consumer that
counts the messages it received instead of asking the system for positions.
In one run this looks right; after a restart a new reader starts counting at
zero again, below the offset Spark checkpointed, so the next batch runs from
the checkpointed offset *backwards* (Spark re-reads or skips rows).

Check that must catch it: ``latest-offset-monotonic`` (also breaks
``latest-offset-stable``: a second reader disagrees while no data arrives).

    python -m harness check-source examples/connectors/latest_offset_from_zero.py:RestartsFromZeroSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadLimit

from examples.connectors.jsonl_source import JsonlSource, JsonlStreamReader, available, to_offset


class FromZeroReader(JsonlStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options)
        self.at_start = available(self.options)  # BUG: positions are relative to this reader's start

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        now = available(self.options)
        return to_offset({p: now[p] - self.at_start[p] for p in now})


class RestartsFromZeroSource(JsonlSource):
    @classmethod
    def name(cls) -> str:
        return "jsonl_from_zero"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return FromZeroReader(self.options)
