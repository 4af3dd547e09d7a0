"""Child driver for end-to-end source runs: ``python -m harness.conformance.stream_child RUN_DIR``.

Why a driver of its own: the harness's driver (``harness.driver``) always reads
the replayable source, its oracle is a batch read of that source, and its
verdict locates rows by the replayable source's ``{"<partition>": offset}``
offsets. Here the *source* is what is under test (a user's Python source, or
Spark's ``rate`` / ``rate-micro-batch`` / file source), the sink is the parquet
file sink (exactly-once, so any anomaly is the source's), and the oracle is
computed per source kind from the offsets of the last committed batch.

Line protocol as in ``harness.driver`` (stdout is moved to stderr; answers go to
a private copy of fd 1): ``{"cmd": "run"}`` runs the query with
``Trigger.AvailableNow`` (checkpoint watcher armed with the run's fault plan)
and answers ``caught_up``; with ``batches_per_run`` = n in the spec (a source
whose data arrives by itself, where one ``availableNow`` query sees one
``latestOffset``) it runs a 100 ms processing-time trigger until n more batches
have committed (or none for ``STALL_S``); ``{"cmd": "check"}`` writes ``oracle/expected.parquet``
and ``oracle/observed.parquet``; ``{"cmd": "warm"}`` starts the Python workers
(a standby driver does this while it waits); ``{"cmd": "exit"}`` stops. The run directory
holds ``stream.json`` (the :func:`source spec <read_spec>`), ``checkpoint/``,
``output/``, ``faults/``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SPEC_FILE = "stream.json"
#: With ``batches_per_run``: a query that commits no batch for this long has no new data; it is stopped.
STALL_S = 10.0


def read_spec(run_dir: Path) -> dict[str, Any]:
    """``stream.json``: ``kind`` (``python`` | ``rate`` | ``rate-micro-batch`` | ``file``),
    ``format``, ``options``, ``python_ref`` ([module, class] for ``python``),
    ``schema`` (DDL, file source), ``input`` (file source directory), ``compare``
    (columns the verdict compares; ``null`` = all), ``batches_per_run`` (optional, see ``run``)."""
    return dict(json.loads((run_dir / SPEC_FILE).read_text()))


def committed_end(checkpoint: Path) -> Any:
    """The source's end offset of the last *committed* batch (``None`` before the first commit): the oracle's
    end. A query stopped after ``batches_per_run`` commits may have logged the offsets of one more batch that
    it never ran; those rows reach the sink only when a restart runs that batch."""
    from harness.inspector import batch_ids, read_offsets

    ids = batch_ids(checkpoint / "commits")
    return read_offsets(checkpoint, ids[-1]).sources[0] if ids else None


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, default=str) + "\n")
    out.flush()


class StreamChild:
    def __init__(self, spark: SparkSession, run_dir: Path) -> None:
        self.spark, self.run_dir = spark, run_dir
        self.spec = read_spec(run_dir)
        self.checkpoint, self.output = run_dir / "checkpoint", run_dir / "output"
        self.source_cls: Any = None
        if self.spec["kind"] == "python":
            module, attr = self.spec["python_ref"]
            self.source_cls = getattr(importlib.import_module(module), attr)
            spark.dataSource.register(self.source_cls)

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

        site = FaultSite(self.run_dir / "faults", self.checkpoint)
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
        batches = []
        for p in query.recentProgress:
            prog = json.loads(p.json)
            src = (prog.get("sources") or [{}])[0]
            batches.append(
                {"batch_id": prog.get("batchId"), "rows": prog.get("numInputRows"), "end": src.get("endOffset")}
            )
        return {"event": "caught_up", "batches": [b for b in batches if b["rows"]]}

    def _await_batches(self, query: Any, n: int) -> None:
        """Let ``query`` commit ``n`` batches beyond what the checkpoint held at its start, then stop it; stop
        sooner when no batch commits for ``STALL_S`` (a source without new data). A failed query raises."""
        import time

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
            if query.exception() is not None:
                raise RuntimeError(f"the query failed: {str(query.exception()).splitlines()[0]}")
        finally:
            query.stop()

    def expected(self) -> DataFrame:
        kind, opts = self.spec["kind"], self.spec["options"]
        end = committed_end(self.checkpoint)
        if kind == "file":
            return self.spark.read.schema(self.spec["schema"]).json(self.spec["input"])
        if kind == "rate":
            rows = int(end or 0) * int(opts.get("rowsPerSecond", "1"))
            return self.spark.range(0, rows).selectExpr("id AS value")
        if kind == "rate-micro-batch":
            n, per = int((end or {}).get("offset", 0)), int(opts["rowsPerBatch"])
            start, adv = int(opts.get("startTimestamp", "0")), int(opts.get("advanceMillisPerBatch", "1000"))
            return self.spark.range(0, n).selectExpr(
                f"timestamp_millis({start} + (id div {per}) * {adv}) AS timestamp", "id AS value"
            )
        from harness.conformance.reader import SourceUnderTest

        source = SourceUnderTest(self.source_cls, opts)
        reader = source.reader()
        rows: list[Any] = []
        if end is not None and reader.kind == "simple":
            # Spark plans a simple reader's batches with read(start); a replay uses readBetweenOffsets, which
            # is under test here, so the oracle reads everything with read() when that ends where the query did.
            got, got_end = reader.simple_read(reader.initial())
            rows = list(got.elements()) if got_end == end else list(reader.rows(reader.initial(), end).elements())
        elif end is not None:
            rows = list(reader.rows(reader.initial(), end).elements())
        reader.stop()
        return self.spark.createDataFrame(rows, schema=source.datasource().schema())

    def check(self) -> dict[str, Any]:
        import pyarrow.parquet as pq

        oracle = self.run_dir / "oracle"
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


def warm(spark: SparkSession) -> dict[str, Any]:
    """Start the Python workers with a throw-away job (a standby does this while it waits)."""
    spark.createDataFrame([(1,), (2,)], "x INT").rdd.map(lambda r: r[0] + 1).collect()
    return {"event": "warmed"}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    run_dir = Path(args[0])
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    from fault_injectors.crash import DRIVER_PGID_ENV
    from harness.session import build_session

    os.environ[DRIVER_PGID_ENV] = str(os.getpgid(0))
    try:
        spark = build_session("harness-stream-child")
        child = StreamChild(spark, run_dir)
    except Exception as exc:
        _send(proto, {"event": "error", "message": f"start-up failed: {exc}", "traceback": traceback.format_exc()})
        return 2
    _send(proto, {"event": "ready", "pid": os.getpid(), "pgid": os.getpgid(0)})
    for line in sys.stdin:
        cmd = json.loads(line).get("cmd")
        if cmd == "exit":
            break
        try:
            if cmd == "warm":
                reply = warm(spark)
            elif cmd in ("run", "check"):
                reply = child.run() if cmd == "run" else child.check()
            else:
                reply = {"event": "error", "message": f"unknown command {cmd!r}"}
        except Exception as exc:
            first = str(exc).split("\n=== Streaming Query ===")[0]
            reply = {"event": "error", "message": first, "traceback": traceback.format_exc()}
        _send(proto, reply)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
