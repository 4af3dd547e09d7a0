"""The warm-up query of a driver: the Python workers, the replayable source, the parquet
file sink and a state store, started once so that a real run's first batch does not pay for them
(a standby driver runs it while it waits; the class-data archive is dumped after it)."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.replayable_source import FORMAT
from scenarios.tap import advance, init_tap

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def warm(spark: SparkSession) -> dict[str, Any]:
    """Start the Python workers a harness query needs (data source lookup,
    planning, the streaming source runner, readers) with a tiny throw-away
    query, so a standby driver's first real batch does not pay for them."""
    t0 = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="harness-warm-"))
    try:
        init_tap(root / "tap.json", 2)
        advance(root / "tap.json", {0: 4, 1: 4})
        opts = {"seed": "0", "tap": str(root / "tap.json")}
        stream = spark.readStream.format(FORMAT).options(**opts).load()
        # The parquet file sink and a state store: the first batch after a take-over then
        # costs ~1 steady batch instead of ~2.5 (measured with the file sink).
        queries = [
            stream.writeStream.format("parquet").option("path", str(root / "out")),
            stream.groupBy("key").count().writeStream.format("noop").outputMode("update"),
        ]
        for i, writer in enumerate(queries):
            query = writer.option("checkpointLocation", str(root / f"ckpt-{i}")).trigger(availableNow=True).start()
            query.awaitTermination()
        spark.read.format(FORMAT).options(**opts).load().toArrow()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"event": "warmed", "seconds": round(time.monotonic() - t0, 2)}
