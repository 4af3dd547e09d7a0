"""BROKEN on purpose: the per-call counter that counts from zero in every new reader.

One bug away from :mod:`examples.connectors.per_call_counter`: ``latestOffset``
adds ``step`` to the last offset *this reader* reported and ignores the
``start`` Spark passes. Within one query that looks right (each call moves on);
a reader created after a restart starts at ``step`` again, below the offset
Spark checkpointed, so the next batch ends before it starts.

Check that must catch it: ``latest-offset-monotonic`` (without Spark: a reader
restarted from the offset reached 7 steps in reports ``{"n": 10}``); with Spark
``latest-offset-behind-checkpoint`` (the batch after the kill ends behind the
checkpoint) and ``end-to-end``. ``latest-offset-stable`` is only a ``note``, as
for the correct twin: data arriving per call is not a bug::

    python -m harness check-source examples/connectors/per_call_counter_from_zero.py:PerCallCounterFromZeroSource
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader

from examples.connectors.per_call_counter import PerCallCounterReader, PerCallCounterSource


class FromZeroCounterReader(PerCallCounterReader):
    def next_end(self, start: Mapping[str, Any]) -> int:
        return self.last + self.step  # BUG: ignores start; a new reader counts from zero


class PerCallCounterFromZeroSource(PerCallCounterSource):
    @classmethod
    def name(cls) -> str:
        return "per_call_counter_from_zero"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return FromZeroCounterReader(self.options)
