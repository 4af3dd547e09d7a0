"""``bench_floor``: the cheapest Python streaming data source that yields the
replayable source's rows, so ``harness bench`` can show what any Python data
source costs per batch on this machine (``python_source_floor_ratio``) apart
from what the harness's own source adds (``replayable_vs_floor_ratio``).

Offsets are ``{"n": rows so far}``; every ``latestOffset`` makes
``rows_per_batch`` more rows available (split over two input partitions,
like the replayable source's default), and ``read`` yields one constant row
repeatedly: no generation, no fault points, no files.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from scenarios.rowgen import SCHEMA_DDL

FORMAT = "bench_floor"
_ROW = (0, 0, 0, 0, 0, datetime(2026, 1, 1, tzinfo=UTC))


class _Slice(InputPartition):
    def __init__(self, partition: int, count: int) -> None:
        super().__init__((partition, count))
        self.partition = partition
        self.count = count


class FloorStreamReader(DataSourceStreamReader):
    """Always ``rows_per_batch`` new rows; reading them costs only PySpark's own path."""

    def __init__(self, rows_per_batch: int) -> None:
        self.rows_per_batch = rows_per_batch
        self._end = 0  # end offset of the last planned batch

    def initialOffset(self) -> dict[str, int]:
        return {"n": 0}

    # The no-argument form (no admission control), which PySpark still calls; the stubs know only (start, limit).
    def latestOffset(self) -> dict[str, int]:  # type: ignore[override]
        return {"n": self._end + self.rows_per_batch}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        self._end = end["n"]
        rows = end["n"] - start["n"]
        return [_Slice(0, rows // 2), _Slice(1, rows - rows // 2)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, _Slice)
        for _ in range(partition.count):
            yield _ROW

    def commit(self, end: dict[str, int]) -> None:
        pass


class FloorDataSource(DataSource):
    """The ``bench_floor`` format (streaming only); option ``rows_per_batch`` (default 200)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        return SCHEMA_DDL

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return FloorStreamReader(int(self.options.get("rows_per_batch", 200)))
