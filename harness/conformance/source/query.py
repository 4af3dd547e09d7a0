"""A source run inside the harness's child driver: the source under test feeding the parquet file sink.

The harness driver (:func:`harness.engine.driver.open_run`) opens a run directory that
holds ``source_run.json`` with :class:`SourceQuery` instead of a scenario. Here
the *source* is what is under test (a user's Python source, or Spark's
``rate`` / ``rate-micro-batch`` / file source), the sink is the parquet file
sink (exactly-once, so any anomaly is the source's), and the oracle is computed
per source kind from the offsets of the last committed batch.

``run`` runs the query with ``Trigger.AvailableNow`` (checkpoint watcher armed
with the run's fault plan); with ``batches_per_run`` = n in the spec (a source
whose data arrives by itself, where one ``availableNow`` query sees one
``latestOffset``) it runs a 100 ms processing-time trigger until n more batches
have committed (or none for ``STALL_S``). ``check`` writes
``oracle/expected.parquet`` and ``oracle/observed.parquet``.
"""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.engine.rundir import RunPaths

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from harness.engine.progress import ProgressLog

#: With ``batches_per_run``: a query that commits no batch for this long has no new data; it is stopped.
STALL_S = 10.0


def read_spec(paths: RunPaths) -> dict[str, Any]:
    """``source_run.json``: ``kind`` (``python`` | ``rate`` | ``rate-micro-batch`` | ``file``),
    ``format``, ``options``, ``python_ref`` ([module, class] for ``python``),
    ``schema`` (DDL, file source), ``input`` (file source directory), ``compare``
    (columns the verdict compares; ``null`` = all), ``identity`` (columns that
    name a row), ``batches_per_run`` (optional, see the module docstring)."""
    return dict(json.loads(paths.source_run.read_text()))


def committed_end(checkpoint: Path, output: Path | None = None) -> Any:
    """The source's end offset of the last batch whose rows the sink made visible (``None`` before the first):
    the oracle's end. That is the last batch in ``commits/``, or in the file sink's own log
    (``output/_spark_metadata``) when that is further on. A query stopped after ``batches_per_run`` commits may
    have logged the offsets of one more batch it never ran (its rows reach the sink only when a restart runs
    it); or it may have been stopped after the file sink published a batch and before ``commits/N`` was
    written (its rows are visible; a restart re-plans the batch and the sink skips it)."""
    from harness.inspector import batch_ids, read_offsets

    ids = batch_ids(checkpoint / "commits")
    if output is not None:
        ids = sorted({*ids, *batch_ids(output / "_spark_metadata")})
    return read_offsets(checkpoint, ids[-1]).sources[0] if ids else None


class SourceQuery:
    """The run handler of a source run (``run`` and ``check``, as the driver's protocol asks)."""

    def __init__(self, paths: RunPaths, incarnation: int, spark: SparkSession, progress: ProgressLog | None) -> None:
        self.spark, self.paths, self.progress = spark, paths, progress
        self.spec = read_spec(paths)
        self.checkpoint, self.output = paths.checkpoint, paths.output
        if progress is not None:
            progress.events_path = paths.driver_events(incarnation)
        self.source_cls: Any = None
        if self.spec["kind"] == "python":
            module, attr = self.spec["python_ref"]
            from harness.sources.initial import RECORD_FILE, recording_source

            self.source_cls = getattr(importlib.import_module(module), attr)
            self.initial_record = paths.root / RECORD_FILE
            spark.dataSource.register(recording_source(self.source_cls, self.initial_record, self.checkpoint))

    def stream(self) -> DataFrame:
        reader = self.spark.readStream.format(self.spec["format"]).options(**self.spec["options"])
        if self.spec.get("schema"):
            reader = reader.schema(self.spec["schema"])
        if self.spec["kind"] == "file":
            return reader.load(self.spec["input"])
        return reader.load()

    def run(self) -> dict[str, Any]:
        from fault_injectors.crash import FaultSite
        from fault_injectors.watcher import CheckpointWatcher
        from harness.engine.progress import caught_up
        from harness.spark.session import apply_run_confs

        apply_run_confs(self.spark, {})
        site = FaultSite(self.paths.faults, self.checkpoint)
        watcher = CheckpointWatcher(site, self.checkpoint, self.output)
        if watcher.needed():
            watcher.start()
        per_run = int(self.spec.get("batches_per_run") or 0)
        try:
            writer = (
                self.stream()
                .writeStream.format("parquet")
                .option("path", str(self.output))
                .option("checkpointLocation", str(self.checkpoint))
            )
            if per_run:
                query = writer.trigger(processingTime="100 milliseconds").start()
                self._await_batches(query, per_run)
            else:
                query = writer.trigger(availableNow=True).start()
                query.awaitTermination()
        finally:
            watcher.stop()
        return caught_up(query, self.progress)

    def _await_batches(self, query: Any, n: int) -> None:
        """Let ``query`` commit ``n`` batches beyond what the checkpoint held at its start, then stop it; stop
        sooner when no batch commits for ``STALL_S`` (a source without new data). A failed query raises its
        ``StreamingQueryException``, whose message holds the Python traceback of what the source raised."""
        from harness.inspector import batch_ids

        def committed() -> int:
            ids = batch_ids(self.checkpoint / "commits")
            return ids[-1] if ids else -1

        target, last, quiet_since = committed() + n, committed(), time.monotonic()
        try:
            while query.isActive and committed() < target and time.monotonic() - quiet_since < STALL_S:
                time.sleep(0.05)
                if committed() != last:
                    last, quiet_since = committed(), time.monotonic()
            failed = query.exception()
            if failed is not None:  # whole: Spark's message holds the source's traceback (a query failure)
                raise failed
        finally:
            query.stop()

    def expected(self) -> DataFrame:
        kind, opts = self.spec["kind"], self.spec["options"]
        end = committed_end(self.checkpoint, self.output)
        if kind == "file":
            return self.spark.read.schema(self.spec["schema"]).json(self.spec["input"])
        if kind == "rate":
            count = int(end or 0) * int(opts.get("rowsPerSecond", "1"))
            return self.spark.range(0, count).selectExpr("id AS value")
        if kind == "rate-micro-batch":
            n, per = int((end or {}).get("offset", 0)), int(opts["rowsPerBatch"])
            start, adv = int(opts.get("startTimestamp", "0")), int(opts.get("advanceMillisPerBatch", "1000"))
            return self.spark.range(0, n).selectExpr(
                f"timestamp_millis({start} + (id div {per}) * {adv}) AS timestamp", "id AS value"
            )
        from harness.sources.initial import oracle_ranges
        from harness.sources.reader import SourceUnderTest

        source = SourceUnderTest(self.source_cls, opts)
        reader = source.reader()
        rows: list[Any] = []
        if end is not None:
            # From the initial offset Spark planned batch 0 with (recorded when Spark asked: asking again now
            # would start later for a clock-driven source), as one range unless batch 0 was planned inverted.
            spans = oracle_ranges(self.initial_record, self.checkpoint, end, reader.initial)
            start = spans[0][0]
            if reader.kind == "simple" and len(spans) == 1:
                # Spark plans a simple reader's batches with read(start); a replay uses readBetweenOffsets, which
                # is under test here, so the oracle reads with read() when that ends where the query did.
                got, got_end = reader.simple_read(start)
                rows = list(got.elements()) if got_end == end else list(reader.rows(start, end).elements())
            else:
                rows = [row for a, b in spans for row in reader.rows(a, b).elements()]
        reader.stop()
        return self.spark.createDataFrame(rows, schema=source.datasource().schema())

    def check(self) -> dict[str, Any]:
        import pyarrow.parquet as pq

        oracle = self.paths.oracle
        oracle.mkdir(exist_ok=True)
        expected = self.expected()
        if (self.output / "_spark_metadata").is_dir():
            observed = self.spark.read.schema(expected.schema).parquet(str(self.output))
        else:
            observed = self.spark.createDataFrame([], expected.schema)
        cols = self.spec.get("compare") or expected.columns
        counts = {}
        for name, df in (("expected", expected), ("observed", observed)):
            table = df.select(*cols).toArrow()
            pq.write_table(table, oracle / f"{name}.parquet")
            counts[f"{name}_rows"] = table.num_rows
        return {"event": "checked", **counts}
