"""BROKEN on purpose: a third-party-style source whose ``latestOffset`` raises inside Spark.

Written the way a connector author writes one against a vendor SDK: a stand-in API client
(:class:`StandInFeedClient`, answering with dicts the way an HTTP API's JSON does) over the
JSON-lines log of :mod:`examples.connectors._jsonl`. The bug: ``latestOffset`` reads the
shard's ``"sequence_end"`` field, which the API only sends once a shard is closed, so every call
on an open shard raises ``KeyError: 'sequence_end'`` (in the driver's Python source runner).

What must catch it, naming this file's own frame (``raising_latest_offset.py:LINE in
shard_end``), not Spark's wrapper (``python_streaming_source_runner.py``): **``offsets-json``**,
``latest-offset-monotonic`` and every other contract check that asks ``latestOffset`` (the two
habit checks, which never fail, are skipped with the same cause), and **``end-to-end``** (the
query failed inside Spark: a failure of the source with its cause, exit 1, not "no verdict")::

    python -m harness check-source examples/connectors/raising_latest_offset.py:RaisingLatestOffsetSource \\
        --context examples/connectors/_jsonl.py:log_context
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit

SCHEMA = "partition INT, line BIGINT, value BIGINT"


class StandInFeedClient:
    """A stand-in for a vendor's feed SDK: ``describe()`` answers like the API's JSON, shard by shard."""

    def __init__(self, root: str, shards: int) -> None:
        self.root, self.shards = Path(root), shards

    def describe(self) -> dict[str, Any]:
        out = []
        for s in range(self.shards):
            log = self.root / f"p{s}.jsonl"
            lines = log.read_bytes().count(b"\n") if log.exists() else 0
            out.append({"shard_id": s, "sequence_start": 0, "records": lines, "status": "OPEN"})
        return {"stream": {"shards": out}}


class ShardRange(InputPartition):
    def __init__(self, shard: int, start: int, end: int) -> None:
        super().__init__((shard, start, end))
        self.shard, self.start, self.end = shard, start, end


def shard_end(shard: Mapping[str, Any]) -> int:
    """The bug: ``sequence_end`` is only sent for a CLOSED shard."""
    return int(shard["sequence_end"])


class RaisingLatestOffsetReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.client = StandInFeedClient(options["path"], int(options.get("partitions", "2")))

    def initialOffset(self) -> dict[str, int]:
        return {str(s): 0 for s in range(self.client.shards)}

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        shards = self.client.describe()["stream"]["shards"]
        return {str(sh["shard_id"]): shard_end(sh) for sh in shards}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        return [ShardRange(int(k), int(start.get(k, 0)), int(e)) for k, e in end.items() if e > start.get(k, 0)]

    def read(self, partition: InputPartition) -> Iterator[tuple[int, int, int]]:
        import json

        assert isinstance(partition, ShardRange)
        with open(self.client.root / f"p{partition.shard}.jsonl", encoding="utf-8") as f:
            for n, text in enumerate(f):
                if partition.start <= n < partition.end:
                    rec = json.loads(text)
                    yield (rec["partition"], rec["line"], rec["value"])


class RaisingLatestOffsetSource(DataSource):
    """Format ``raising_latest_offset``; options ``path``, ``partitions`` (set by ``log_context``)."""

    @classmethod
    def name(cls) -> str:
        return "raising_latest_offset"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return RaisingLatestOffsetReader(self.options)
