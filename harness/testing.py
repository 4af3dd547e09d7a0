"""Helpers for users' own tests (the ``replayable_source`` fixture)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.replayable_source import FORMAT
from scenarios.rowgen import SourceConfig
from scenarios.tap import advance, init_tap, read_tap

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class ReplayableSource:
    """A replayable source with its own tap in ``root``.

    ``add({partition: n})`` makes ``n`` more offsets available; ``stream()``
    is a streaming DataFrame over whatever is available when each batch is
    planned; ``batch()`` reads exactly what has been added so far (the input a
    test's oracle should use); ``rows()`` returns it as Python tuples without
    Spark."""

    def __init__(self, spark: SparkSession, root: Path, config: SourceConfig | None = None, **config_fields: Any):
        self.spark = spark
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.config = config or SourceConfig(**config_fields)
        self.tap = self.root / "tap.json"
        init_tap(self.tap, self.config.partitions)

    def add(self, rows: Mapping[int, int]) -> dict[int, int]:
        """Make ``rows[p]`` more offsets available in partition ``p``; returns the new tap."""
        return advance(self.tap, rows)

    def options(self, **extra: str) -> dict[str, str]:
        return {**self.config.to_options(), "tap": str(self.tap), **extra}

    def stream(self, max_rows_per_batch: int | None = None) -> DataFrame:
        extra = {"max_rows_per_batch": str(max_rows_per_batch)} if max_rows_per_batch else {}
        return self.spark.readStream.format(FORMAT).options(**self.options(**extra)).load()

    def batch(self) -> DataFrame:
        end = json.dumps({str(p): n for p, n in read_tap(self.tap).items()})
        return self.spark.read.format(FORMAT).options(**{**self.config.to_options(), "end": end}).load()

    def rows(self) -> list[tuple[Any, ...]]:
        return [r for p, n in read_tap(self.tap).items() for r in self.config.rows(p, 0, n)]
