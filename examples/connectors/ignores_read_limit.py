"""BROKEN on purpose: a source that declares a read limit and then ignores the one it is given.

One bug away from :mod:`examples.connectors.capped_batches`:
``getDefaultReadLimit()`` still says ``ReadMaxRows(maxRowsPerBatch)``, but
``latestOffset(start, limit)`` admits everything available whatever ``limit``
says. Spark trusts the source with admission control, so every batch is as
large as the backlog: a query that was sized for small batches gets one huge
batch after downtime (memory, latency, state-store pressure), and
``maxRowsPerBatch`` silently does nothing.

Check that must catch it: ``admission-control`` (a batch of 210 rows under
``ReadMaxRows(7)``). Exactly-once is not at stake, so ``end-to-end`` holds::

    python -m harness check-source examples/connectors/ignores_read_limit.py:IgnoresReadLimitSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadLimit

from examples.connectors.capped_batches import CappedBatchesSource, CappedReader


class IgnoringReader(CappedReader):
    def admitted(self, limit: ReadLimit) -> int | None:
        return None  # BUG: the limit Spark passes is never applied


class IgnoresReadLimitSource(CappedBatchesSource):
    @classmethod
    def name(cls) -> str:
        return "jsonl_ignores_limit"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return IgnoringReader(self.options)
