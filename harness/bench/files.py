"""Bench input: Spark's JSON file source over files the harness published (``file_source_overhead_ratio``)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any


def file_source_batch(
    spark: Any, work: Path, rows: int, batches: int, durations: Callable[[Any, int], list[float]]
) -> float:
    """Median batch time of Spark's JSON file source -> ``noop`` over files the harness published
    (:mod:`scenarios.filedir`, one file per partition and round, 2 partitions): ``rows`` rows a batch
    (``maxFilesPerTrigger`` 2), the input of a file-directory scenario without Python in the hot path.
    ``durations(query, n)`` waits for ``n`` batches, stops the query and returns their trigger seconds."""
    from pyspark.sql.types import StructType, _parse_datatype_string

    from scenarios.filedir import publish
    from scenarios.rowgen import SCHEMA_DDL, SourceConfig
    from scenarios.tap import advance, init_tap

    config, schema = SourceConfig(seed=1, partitions=2), _parse_datatype_string(SCHEMA_DDL)
    assert isinstance(schema, StructType)
    work.mkdir(parents=True, exist_ok=True)
    tap = work / "tap.json"
    init_tap(tap, 2)
    for _ in range(batches):
        advance(tap, {0: rows // 2, 1: rows - rows // 2})
        publish(work / "input", tap, "json", config, None, schema)
    reader = spark.readStream.format("json").schema(SCHEMA_DDL).option("maxFilesPerTrigger", 2)
    stream = reader.load(str(work / "input"))
    q = stream.writeStream.format("noop").option("checkpointLocation", str(work / "ckpt")).start()
    return statistics.median(durations(q, batches))
