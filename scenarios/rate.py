"""Spark's ``rate`` source in continuous processing: data that arrives by itself, by the clock.

In continuous processing (``trigger(continuous=...)``) the rate source's partition ``p`` of ``n`` emits the values
``p, p + n, p + 2n, ...`` (``rowsPerSecond`` in all), and each epoch's ``offsets/N`` records, per partition, the
last value emitted: ``{"0": {"value": V, "runTimeMs": T}, ...}`` (a partition starts at ``p - n``: nothing yet).
So the checkpoint alone says which rows the committed epochs hold:

- the oracle's input (:meth:`RateSource.batch`) is every value up to the newest committed epoch's, per partition;
- each value's epoch (:meth:`RateSource.input_batches`) is the first epoch whose offset reaches it;
- a round's run is over when the committed values cover the tap (:meth:`RateSource.caught_up`): the runner's
  ``add data p0+K`` asks for K more rows of partition 0, which the clock then brings.

Rows a sink received past the newest committed epoch belong to an epoch that never committed (the run stopped,
or was killed, during it); the next run redoes it, so they are not judged (:meth:`RateSource.committed_only`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.tap import read_tap

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from scenarios.sources import SourceRun

#: The rows' schema: the rate source's two columns.
RATE_DDL = "timestamp TIMESTAMP, value BIGINT"


def rate_offsets(raw: Any) -> dict[int, int] | None:
    """``{partition: last value emitted}`` of a continuous rate offset; ``None`` when ``raw`` is not one."""
    if not isinstance(raw, Mapping):
        return None
    try:
        return {int(p): int(v["value"]) for p, v in raw.items()}
    except (TypeError, ValueError, KeyError):
        return None


def emitted(partition: int, partitions: int, last: int) -> int:
    """How many values partition ``partition`` of ``partitions`` has emitted when its last one is ``last``."""
    return max(0, (last - partition) // partitions + 1)


def _committed(checkpoint: str | Path) -> list[tuple[int, dict[int, int]]]:
    """``(epoch, last value per partition)`` of every committed epoch, oldest first."""
    from harness.inspector import batch_ids, read_offsets

    out = []
    for epoch in batch_ids(Path(checkpoint) / "commits"):
        values = rate_offsets(read_offsets(checkpoint, epoch).sources[0])
        if values is not None:
            out.append((epoch, values))
    return out


@dataclass(frozen=True)
class RateSource:
    """``format("rate")`` with ``rows_per_second`` rows a second over the scenario's partitions."""

    rows_per_second: int = 40
    limits_batches: bool = field(default=False, init=False)
    provenance: bool = field(default=False, init=False)

    def fires(self, write_points: bool) -> frozenset[str]:
        return frozenset()

    def feed(self, input_dir: str | Path, rows: Mapping[int, int], rows_per_offset: int) -> dict[str, Any]:
        """Nothing to write: the clock brings the rows; the tap says how many a run waits for."""
        return {}

    def describe(self) -> str:
        return f"Spark's rate source ({self.rows_per_second} rows/s, continuous)"

    def stream(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        return (
            spark.readStream.format("rate")
            .option("rowsPerSecond", str(self.rows_per_second))
            .option("numPartitions", str(run.config.partitions))
            .load()
        )

    def _values(self, run: SourceRun) -> Iterator[tuple[int, int]]:
        """``(value, epoch)`` of every row the committed epochs hold."""
        n = run.config.partitions
        reached = {p: p - n for p in range(n)}
        for epoch, last in _committed(run.checkpoint):
            for p, v in sorted(last.items()):
                for value in range(reached.get(p, p - n) + n, v + 1, n):
                    yield value, epoch
                reached[p] = max(reached.get(p, p - n), v)

    def batch(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        """Every row the committed epochs hold (``timestamp`` is the clock's, not reproducible: null here)."""
        rows = [(None, value) for value, _ in self._values(run)]
        return spark.createDataFrame(rows, RATE_DDL)

    def input_batches(self, run: SourceRun, identity: Sequence[str]) -> pa.Table | None:
        """Each committed row's ``value`` and the epoch that read it."""
        import pyarrow as pa

        from harness.verdict.check import INPUT_BATCH_COLUMN

        if list(identity) != ["value"]:
            return None
        pairs = list(self._values(run))
        return pa.table({"value": [v for v, _ in pairs], INPUT_BATCH_COLUMN: [e for _, e in pairs]})

    def caught_up(self, offset: Any, run: SourceRun) -> bool:
        """Whether a committed offset holds as many rows per partition as the tap asks for."""
        last = rate_offsets(offset) or {}
        n = run.config.partitions
        return all(emitted(p, n, last.get(p, p - n)) >= want for p, want in read_tap(run.tap).items())

    @staticmethod
    def committed_only(df: DataFrame, checkpoint: str | Path, partitions: int) -> DataFrame:
        """``df`` without the rows past the newest committed epoch (module docstring)."""
        from pyspark.sql import functions as F

        committed = _committed(checkpoint)
        last = committed[-1][1] if committed else {}
        keep = F.lit(False)
        for p in range(partitions):
            bound = last.get(p, p - partitions)
            keep = keep | ((F.col("value") % partitions == p) & (F.col("value") <= bound))
        return df.where(keep)
