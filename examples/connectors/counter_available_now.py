"""Correct, and unusual: a per-call counter (data that arrives by itself) that supports ``availableNow``.

:mod:`examples.connectors.per_call_counter` with ``SupportsTriggerAvailableNow``: the "latest data at the time"
of a counter is what its next call would report, so ``prepareForTriggerAvailableNow()`` records that as the
job's target, and ``latestOffset(start, limit)`` never reports past it. A scheduled ``availableNow`` job over
it reads one step of rows and ends, however often Spark asks. No context feeds it: the counter is the data.

Contract it meets: Spark's ``SupportsTriggerAvailableNow`` (the target is recorded at the job's start; no
offset past it is returned). ``available-now-target`` passes: the job stops at its target while a fresh reader
(the data that arrived meanwhile) counts on. The rest is :mod:`examples.connectors.per_call_counter`'s::

    python -m harness check-source examples/connectors/counter_available_now.py:CounterAvailableNowSource
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadLimit, SupportsTriggerAvailableNow

from examples.connectors.per_call_counter import PerCallCounterReader, PerCallCounterSource


class CounterAvailableNowReader(PerCallCounterReader, SupportsTriggerAvailableNow):
    """A per-call counter that stops at the target its job recorded."""

    target: int | None = None

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self.last + self.step  # what the next call would have reported: the data at the job's start

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        end = self.next_end(start)
        if self.target is not None:
            end = max(int(start["n"]), min(end, self.target))  # never past the target, never behind start
        self.last = max(self.last, end)
        return {"n": end}


class CounterAvailableNowSource(PerCallCounterSource):
    """Format ``counter_available_now``; option ``step``."""

    @classmethod
    def name(cls) -> str:
        return "counter_available_now"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return CounterAvailableNowReader(self.options)
