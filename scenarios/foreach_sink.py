"""A ``foreach`` sink (``writeStream.foreach(writer)``) writing JSON files, with the harness's crash points.

``foreach`` is the Python sink that continuous processing and Real-time Mode accept (``foreachBatch`` is
micro-batch only). Spark calls ``open(partition_id, epoch_id)`` once per partition and epoch (a micro-batch's
batch id), ``process(row)`` per row and ``close(error)``; the writer fires ``sink.write.start`` in ``open``,
``sink.write.mid`` after a rule's ``after_rows`` rows (or in ``close``, for fewer) and ``sink.write.end`` in
``close``, with the epoch as the batch, so kills land inside the user's side of the sink.

Three ways to write, the ones ``foreach`` users choose between:

- ``append`` (naive): each row is appended to ``rows-<partition>.jsonl`` as it comes: an epoch replayed after a
  restart appends its rows again (at-least-once);
- ``upsert``: each row is written to a file named by its identity columns (tmp file, then rename), so a
  replayed row overwrites itself (idempotent by row: exactly-once effect whatever the epochs replay);
- ``epoch``: deduplicated by ``(partition_id, epoch_id)``, which the Programming Guide warns cannot work ("Spark
  does not guarantee same output for (partitionId, epochId)"):
  ``open`` returns ``False`` for a pair already written, else the rows go to a staging file published (renamed)
  in ``close``. Exactly-once when a replayed epoch reads what the first attempt read (micro-batches replay
  ``offsets/N``); a Real-time Mode batch re-run after a restart ends by the clock, so it may read less than the
  attempt that wrote the pair, and the rest comes again in the next batch.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.crash import FaultSite
from scenarios.base import SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

MODES = ("append", "upsert", "epoch")


class FileForeachWriter:
    """The ``foreach`` writer object (pickled to the tasks): see the module docstring."""

    #: It fires the sink points itself: the harness does not wrap it again (fault_injectors.autowrap).
    __harness_instrumented__ = True

    def __init__(self, output: str, fault_dir: str, checkpoint: str, mode: str, identity: tuple[str, ...]) -> None:
        if mode not in MODES:
            raise ValueError(f"FileForeachWriter: mode {mode!r} is not one of {', '.join(MODES)}")
        self.output, self.fault_dir, self.checkpoint = output, fault_dir, checkpoint
        self.mode, self.identity = mode, identity

    def open(self, partition_id: int, epoch_id: int) -> bool:
        self.partition, self.epoch, self.rows = partition_id, epoch_id, 0
        self.staging: Path | None = None
        self.site = FaultSite(self.fault_dir, self.checkpoint)
        self.mid = self.site.armed("sink.write.mid", epoch_id, partition_id)
        self.mid_at = min((r.after_rows or 0) for r in self.mid) if self.mid else None
        self.site.maybe_fire("sink.write.start", epoch_id, partition=partition_id)
        if self.mode == "epoch":
            self.final = Path(self.output) / "epochs" / f"{partition_id}-{epoch_id}.jsonl"
            if self.final.exists():
                return False  # this (partition, epoch) was written: skip it, as the guide suggests
            self.final.parent.mkdir(exist_ok=True)
            self.staging = self.final.with_suffix(f".tmp-{os.getpid()}")
            self.staging.write_text("")
        return True

    def process(self, row: Any) -> None:
        if self.rows == self.mid_at:
            self.site.maybe_fire("sink.write.mid", self.epoch, partition=self.partition, rows=self.rows)
        record = json.dumps(row.asDict(), default=str)
        if self.mode in ("append", "epoch"):
            path = self.staging if self.staging is not None else Path(self.output) / f"rows-{self.partition}.jsonl"
            fd = os.open(path, os.O_CREAT | os.O_APPEND | os.O_WRONLY)
            try:
                os.write(fd, (record + "\n").encode())
            finally:
                os.close(fd)
        else:
            name = "-".join(str(row[c]) for c in self.identity)
            target = Path(self.output) / "rows" / f"{name}.json"
            target.parent.mkdir(exist_ok=True)
            tmp = target.with_suffix(f".tmp-{os.getpid()}")
            tmp.write_text(record + "\n")
            tmp.replace(target)
        self.rows += 1

    def close(self, error: BaseException | None) -> None:
        if error is None and self.staging is not None:
            self.staging.replace(self.final)  # published: a replay of this (partition, epoch) skips it
            self.staging = None
        if error is None:
            if self.mid_at is not None:
                self.site.maybe_fire("sink.write.mid", self.epoch, partition=self.partition, rows=self.rows)
            self.site.maybe_fire("sink.write.end", self.epoch, partition=self.partition)


def foreach_sink(mode: str, identity: tuple[str, ...]) -> Any:
    """An ``attach_sink`` writing through :class:`FileForeachWriter` in ``mode`` into the run's output, in
    update mode (what Real-time Mode requires; a stateless query writes the same rows in any mode)."""

    def attach(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
        Path(ctx.output).mkdir(parents=True, exist_ok=True)
        fault_dir = str(ctx.faults.dir) if ctx.faults.dir is not None else ""
        target = FileForeachWriter(ctx.output, fault_dir, ctx.checkpoint, mode, identity)
        return writer.outputMode("update").foreach(target)

    return attach


def read_foreach_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Every row the writer wrote (appended lines and upserted files alike), parsed into ``schema``."""
    out = Path(ctx.output)
    lines: list[tuple[str]] = []
    for path in sorted(out.glob("rows-*.jsonl")):
        lines += [(line,) for line in path.read_text().splitlines() if line.strip()]
    for path in sorted((out / "rows").glob("*.json")) if (out / "rows").is_dir() else ():
        lines.append((path.read_text().strip(),))
    for path in sorted((out / "epochs").glob("*.jsonl")) if (out / "epochs").is_dir() else ():
        lines += [(line,) for line in path.read_text().splitlines() if line.strip()]
    from pyspark.sql import functions as F

    raw = spark.createDataFrame(lines, "value STRING")
    return raw.select(F.from_json("value", schema).alias("r")).select("r.*")
