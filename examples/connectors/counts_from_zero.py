"""BROKEN on purpose: data that arrives by itself, counted from zero in every new process.

A poller that receives 10 new messages on every poll and numbers them itself:
``latestOffset`` returns ``10 x`` the polls this Python process has made. Within
one process that looks right (each query and each reader sees more data; the
Spark-free checks, run in one process, only see offsets that move forward by
themselves). After a restart the new process counts from zero again, below the
offset Spark checkpointed, so the next batch ends *before* it starts.

Check that must catch it: ``latest-offset-behind-checkpoint`` (the end-to-end
run kills the driver once the checkpoint is 3 batches in); the end-to-end's
consequence also turns ``latest-offset-stable``'s warning into a failure::

    python -m harness check-source examples/connectors/counts_from_zero.py:CountsFromZeroSource

The fix: number the data relative to the ``start`` Spark passes
(``start["rows"] + 10``), as :mod:`examples.connectors.rate_like_source`
numbers it from a fixed instant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadLimit

from examples.connectors.rate_like_source import RateLikeReader, RateLikeSource

PER_POLL = 10


class CountingReader(RateLikeReader):
    polls: ClassVar[int] = 0  # BUG: per process; a restarted process counts from zero

    def __init__(self, options: Mapping[str, str]) -> None:
        self.start_ms, self.per_s = 0, 1000  # rows are (n, n)

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        CountingReader.polls += 1
        return {"rows": PER_POLL * CountingReader.polls}


class CountsFromZeroSource(RateLikeSource):
    @classmethod
    def name(cls) -> str:
        return "counts_from_zero"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return CountingReader(self.options)
