"""BROKEN on purpose: rows carry unseeded random data.

Bug: ``read()`` adds a ``score`` drawn from the process's global random
generator. Reading the same offset range twice gives different rows, so a
batch Spark replays after a crash is not the batch that was lost (the sink
sees rows that no single run produced: replay-divergent output).

Checks that must catch it: ``read-repeatable`` (same range, same process) and
``read-cross-process``.

    python -m harness check-source examples/connectors/unseeded_data.py:UnseededDataSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from examples.connectors._jsonl import read_lines
from examples.connectors.jsonl_source import JsonlSource, JsonlStreamReader, LinePartition


class UnseededReader(JsonlStreamReader):
    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, LinePartition)
        for rec in read_lines(self.options["path"], partition.partition, partition.start, partition.end):
            yield (rec["partition"], rec["line"], rec["value"], random.randint(0, 10**9))  # BUG: unseeded


class UnseededDataSource(JsonlSource):
    @classmethod
    def name(cls) -> str:
        return "jsonl_unseeded"

    def schema(self) -> str:
        return "partition INT, line BIGINT, value BIGINT, score BIGINT"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return UnseededReader(self.options)
