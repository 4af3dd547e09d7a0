"""BROKEN on purpose: a source that records its ``availableNow`` target and then reads past it.

One bug away from :mod:`examples.connectors.jsonl_source`: ``prepareForTriggerAvailableNow()`` still records
the lines available when the job starts, but ``latestOffset(start, limit)`` plans from whatever is available at
each call. Spark's contract (``SupportsTriggerAvailableNow``): after that call "the source will not return an
offset higher than the target offset when latestOffset is called". A scheduled ``availableNow`` job over this
source reads data that arrived after it started, so under steady arrival the job never ends (the next scheduled
run piles up behind it), and its batches are not the ones the schedule was sized for.

Check that must catch it: ``available-now-target`` (the job's ``latestOffset`` moves past its target once the
context adds data). Exactly-once is not at stake, so ``end-to-end`` holds::

    python -m harness check-source examples/connectors/available_now_past_target.py:PastTargetSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows

from examples.connectors.jsonl_source import JsonlSource, JsonlStreamReader, admit, available, to_offset


class PastTargetReader(JsonlStreamReader):
    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        avail = available(self.options)  # BUG: self.target, recorded in prepareForTriggerAvailableNow, is ignored
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return to_offset(admit({int(k): int(v) for k, v in start.items()}, avail, max_rows))


class PastTargetSource(JsonlSource):
    @classmethod
    def name(cls) -> str:
        return "jsonl_past_target"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return PastTargetReader(self.options)
