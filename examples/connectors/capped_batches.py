"""Correct, and unusual: a source whose *default* read limit caps every batch (``ReadMaxRows``).

Most sources read everything available unless the user sets an option; this
one always admits at most ``maxRowsPerBatch`` lines per batch (default 7),
spread over the partitions in turn, so a backlog is worked off in small
batches. ``getDefaultReadLimit()`` returns ``ReadMaxRows(maxRowsPerBatch)``,
which is the limit Spark then passes to every ``latestOffset(start, limit)``;
with ``ReadAllAvailable`` (as the kit passes outside its admission story) it
admits everything. ``Trigger.AvailableNow`` is supported (the target is fixed
when it is prepared).

It passes every check, ``admission-control`` included (the limited batches
cover the same rows as one unlimited read, none larger than the cap)::

    python -m harness check-source examples/connectors/capped_batches.py:CappedBatchesSource \\
        --context examples/connectors/_jsonl.py:log_context

Its broken twin, which ignores the limit it is given, is
:mod:`examples.connectors.ignores_read_limit`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadLimit, ReadMaxRows

from examples.connectors.jsonl_source import JsonlSource, JsonlStreamReader, admit, available, to_offset


class CappedReader(JsonlStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options)
        self.cap = int(self.options.get("maxRowsPerBatch", "7"))
        if self.cap <= 0:
            raise ValueError(f"CappedBatchesSource: maxRowsPerBatch must be positive, got {self.cap}")

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.cap)

    def admitted(self, limit: ReadLimit) -> int | None:
        """The rows this call may admit: the limit's ``max_rows``, or everything."""
        return limit.max_rows if isinstance(limit, ReadMaxRows) else None

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        avail = self.target if self.target is not None else available(self.options)
        return to_offset(admit({int(k): int(v) for k, v in start.items()}, avail, self.admitted(limit)))


class CappedBatchesSource(JsonlSource):
    """Format ``jsonl_capped``; options as :class:`~examples.connectors.jsonl_source.JsonlSource` plus
    ``maxRowsPerBatch``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_capped"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return CappedReader(self.options)
