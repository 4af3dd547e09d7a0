"""Correct, and unusual: ``read()`` yields pyarrow ``RecordBatch``es instead of tuples.

The partitioned JSON-lines source of :mod:`examples.connectors.jsonl_source`,
except that each partition is read into Arrow record batches of at most
``arrowBatchRows`` rows (default 8): Spark takes them as they are (no
per-row conversion), the way a connector over Parquet or Arrow Flight
hands its data over. The batches' schema is exactly the source's schema
(``partition INT, line BIGINT, value BIGINT``); row order and batch cuts are
a pure function of the range.

It passes every check (the kit splits each batch into rows before comparing;
``admission-control`` is skipped: the default read limit is ``ReadAllAvailable``)::

    python -m harness check-source examples/connectors/arrow_batches.py:ArrowBatchesSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from examples.connectors._jsonl import read_lines
from examples.connectors.jsonl_source import JsonlSource, JsonlStreamReader, LinePartition

ARROW_SCHEMA = pa.schema([("partition", pa.int32()), ("line", pa.int64()), ("value", pa.int64())])


class ArrowBatchesReader(JsonlStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__(options)
        self.batch_rows = int(self.options.get("arrowBatchRows", "8"))
        if self.batch_rows <= 0:
            raise ValueError(f"ArrowBatchesSource: arrowBatchRows must be positive, got {self.batch_rows}")

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        assert isinstance(partition, LinePartition)
        recs = read_lines(self.options["path"], partition.partition, partition.start, partition.end)
        for at in range(0, len(recs), self.batch_rows):
            chunk = recs[at : at + self.batch_rows]
            yield pa.RecordBatch.from_pydict(
                {name: [r[name] for r in chunk] for name in ARROW_SCHEMA.names}, schema=ARROW_SCHEMA
            )


class ArrowBatchesSource(JsonlSource):
    """Format ``jsonl_arrow``; options as :class:`~examples.connectors.jsonl_source.JsonlSource` plus
    ``arrowBatchRows``."""

    @classmethod
    def name(cls) -> str:
        return "jsonl_arrow"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return ArrowBatchesReader(self.options)
