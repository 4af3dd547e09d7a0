"""BROKEN on purpose: a decoder that raises on one record instead of handling it.

One bug away from :mod:`examples.connectors.per_call_counter`: ``read()`` decodes
each record, and the decoder raises ``ValueError`` on record ``poisonAt``
(default 40), as a connector does whose parser meets a payload it does not know
("unexpected byte 0x9f"). Spark fails the query; a restart reads the same record
and fails again, so the pipeline is stuck at that batch.

What must catch it, naming the connector's own frame (``poison_record.py:LINE in
decode``), not Spark's wrapper: **``read-repeatable``**, ``read-cross-process`` and
``ranges-contiguous`` (reading the range raised) and **``end-to-end``** (the query
failed inside Spark: a failure of the source with its cause, not "no verdict").
In a chaos campaign (``chaos --source ...``, no context) an example whose query
fails this way is a violation counted as ``source-raised``, shrunk like any other::

    python -m harness check-source examples/connectors/poison_record.py:PoisonRecordSource
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from examples.connectors.per_call_counter import CounterRange, PerCallCounterReader, PerCallCounterSource, mix


def decode(n: int, poison: int) -> int:
    """The record's payload; the bug: record ``poison`` is not handled and raises."""
    if n == poison:
        raise ValueError(f"cannot decode record {n}: unexpected byte 0x9f")
    return mix(n)


class PoisonRecordReader(PerCallCounterReader):
    def __init__(self, options: Any) -> None:
        super().__init__(options)
        self.poison = int(options.get("poisonAt", "40"))

    def read(self, partition: InputPartition) -> Iterator[tuple[int, int]]:
        assert isinstance(partition, CounterRange)
        for n in range(partition.start, partition.end):
            yield (n, decode(n, self.poison))


class PoisonRecordSource(PerCallCounterSource):
    """Format ``poison_record``; options ``step``, ``poisonAt``."""

    @classmethod
    def name(cls) -> str:
        return "poison_record"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return PoisonRecordReader(self.options)
