"""BROKEN on purpose: a third-party-style source whose ``read`` raises inside Spark's Python worker.

Written the way a connector author writes one against a vendor SDK: a stand-in API client
(:class:`StandInRecordsClient`, answering with dicts the way an HTTP API's JSON does) over the
JSON-lines log of :mod:`examples.connectors._jsonl`. Offsets and partitions are right; the bug
is in decoding: ``read`` expects every record to carry a ``"payload"`` envelope, which the API
leaves out of records written before its v2, so every read raises ``KeyError: 'payload'`` (in
an executor's Python worker, ``pyspark/worker.py``).

What must catch it, naming this file's own frame (``raising_read.py:LINE in decode``), not
Spark's worker: **``read-repeatable``**, ``read-cross-process`` and ``ranges-contiguous`` (the
offset checks pass) and **``end-to-end``** (the query failed inside Spark: a failure of the
source with its cause, exit 1, not "no verdict")::

    python -m harness check-source examples/connectors/raising_read.py:RaisingReadSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit

SCHEMA = "partition INT, line BIGINT, value BIGINT"


class StandInRecordsClient:
    """A stand-in for a vendor's records SDK: ``head`` and ``get_records`` answer like the API's JSON."""

    def __init__(self, root: str, shards: int) -> None:
        self.root, self.shards = Path(root), shards

    def head(self, shard: int) -> int:
        log = self.root / f"p{shard}.jsonl"
        return log.read_bytes().count(b"\n") if log.exists() else 0

    def get_records(self, shard: int, start: int, end: int) -> list[dict[str, Any]]:
        with open(self.root / f"p{shard}.jsonl", encoding="utf-8") as f:
            return [json.loads(t) for n, t in enumerate(f) if start <= n < end]


class ShardRange(InputPartition):
    def __init__(self, shard: int, start: int, end: int) -> None:
        super().__init__((shard, start, end))
        self.shard, self.start, self.end = shard, start, end


def decode(record: Mapping[str, Any]) -> tuple[int, int, int]:
    """The bug: records written before the API's v2 have no ``payload`` envelope."""
    body = record["payload"]
    return (body["partition"], body["line"], body["value"])


class RaisingReadReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.client = StandInRecordsClient(options["path"], int(options.get("partitions", "2")))

    def initialOffset(self) -> dict[str, int]:
        return {str(s): 0 for s in range(self.client.shards)}

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        return {str(s): max(int(start.get(str(s), 0)), self.client.head(s)) for s in range(self.client.shards)}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        return [ShardRange(int(k), int(start.get(k, 0)), int(e)) for k, e in end.items() if e > start.get(k, 0)]

    def read(self, partition: InputPartition) -> Iterator[tuple[int, int, int]]:
        assert isinstance(partition, ShardRange)
        for record in self.client.get_records(partition.shard, partition.start, partition.end):
            yield decode(record)


class RaisingReadSource(DataSource):
    """Format ``raising_read``; options ``path``, ``partitions`` (set by ``log_context``)."""

    @classmethod
    def name(cls) -> str:
        return "raising_read"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return RaisingReadReader(self.options)
