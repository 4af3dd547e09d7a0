"""Scenarios for Spark's built-in sinks that have no scenario elsewhere: ``foreach``,
``memory`` and ``console``, each fed by the replayable source (integer columns).

- ``FOREACH``: a naive ``ForeachWriter`` appending every row to a per-task
  JSON-lines file. Its ``close()`` is the sink's commit of that task; the crash
  point ``sink.commit.after`` fires there (after the rows are fsynced, before
  Spark writes ``commits/N``), so a replayed batch is appended again.
- ``MEMORY``: the memory sink; what readers see is the in-memory table of the
  driver that ran the last query.
- ``CONSOLE``: the console sink (all rows, untruncated); what readers see is
  every table printed to the drivers' logs. ``sink.commit.after`` fires from a
  watcher thread in the driver once batch N's table is completely printed
  (polling the log every 1 ms; Spark writes ``commits/N`` right after printing,
  so the ledger records whether the kill won that race). Reading back assumes
  the drivers' log directory holds only this run's console output.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.crash import FaultSite
from harness.conformance.task_sim import COLUMNS
from scenarios.base import Scenario, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType


def transform(df: DataFrame) -> DataFrame:
    return df.select(*COLUMNS)


def _rows_frame(spark: SparkSession, rows: list[dict[str, Any]], schema: StructType) -> DataFrame:
    return spark.createDataFrame([tuple(r.get(c) for c in schema.names) for r in rows], schema)


class AppendingForeachWriter:
    """A naive foreach writer: no batch-id bookkeeping, rows appended as they come."""

    def __init__(self, out: str, fault_dir: str | None, checkpoint: str) -> None:
        self.out, self.fault_dir, self.checkpoint = out, fault_dir, checkpoint

    def open(self, partition_id: int, epoch_id: int) -> bool:
        Path(self.out).mkdir(parents=True, exist_ok=True)
        self.partition, self.epoch = partition_id, epoch_id
        self.file = open(Path(self.out) / f"part-{epoch_id}-{partition_id}-{uuid.uuid4().hex}.jsonl", "a")  # noqa: SIM115
        return True

    def process(self, row: Any) -> None:
        self.file.write(json.dumps(row.asDict()) + "\n")

    def close(self, error: BaseException | None) -> None:
        self.file.flush()
        os.fsync(self.file.fileno())
        self.file.close()
        if error is None:
            FaultSite(self.fault_dir, self.checkpoint).maybe_fire(
                "sink.commit.after", self.epoch, partition=self.partition
            )


def foreach_attach(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    fault_dir = str(ctx.faults.dir) if ctx.faults.dir else None
    return writer.foreach(AppendingForeachWriter(ctx.output, fault_dir, ctx.checkpoint))


def foreach_read(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    rows = [json.loads(line) for f in sorted(Path(ctx.output).glob("*.jsonl")) for line in f.read_text().splitlines()]
    return _rows_frame(spark, rows, schema)


def memory_attach(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.format("memory")


def memory_read(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.table("harness_certify_memory").select(*schema.names)


HEADER = re.compile(r"^Batch: (\d+)$")
BORDER = re.compile(r"^\+[-+]+\+$")


def parse_console(text: str) -> dict[int, list[list[list[str]]]]:
    """Complete tables printed by the console sink, per batch id (a batch printed
    twice has two tables). A table cut short by a kill is ignored."""
    tables: dict[int, list[list[list[str]]]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = HEADER.match(lines[i].strip())
        i += 1
        if not m:
            continue
        borders, rows, header = 0, [], None
        while i < len(lines) and borders < 3:
            line = lines[i].strip()
            i += 1
            if BORDER.match(line):
                borders += 1
            elif line.startswith("|") and line.endswith("|"):
                cells = [c.strip() for c in line[1:-1].split("|")]
                if header is None:
                    header = cells
                else:
                    rows.append(cells)
            elif line and not line.startswith("---"):
                i -= 1  # not part of this table (e.g. the next header after a table cut short): look at it again
                break
        if borders == 3 and header is not None:
            tables.setdefault(int(m.group(1)), []).append([header, *rows])
    return tables


class ConsoleWatcher(threading.Thread):
    """Fires ``sink.commit.after`` of batch N as soon as batch N's table is complete in ``log``."""

    def __init__(self, log: Path, site: FaultSite) -> None:
        super().__init__(name="harness-console-watcher", daemon=True)
        self.log, self.site, self.offset = log, site, log.stat().st_size

    def run(self) -> None:
        seen = ""
        while self.site.armed_at("sink.commit.after"):
            try:
                with open(self.log, encoding="utf-8", errors="replace") as f:
                    f.seek(self.offset)
                    seen += f.read()
                    self.offset = f.tell()
            except OSError:
                return
            for batch in parse_console(seen):
                self.site.maybe_fire("sink.commit.after", batch, via="console-watcher")
            time.sleep(0.001)


_watchers: dict[str, ConsoleWatcher] = {}


def console_attach(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    log = Path(os.readlink("/proc/self/fd/2"))
    key = str(ctx.faults.dir)
    alive = _watchers.get(key)
    if log.is_file() and ctx.faults.armed_at("sink.commit.after") and not (alive and alive.is_alive()):
        _watchers[key] = ConsoleWatcher(log, FaultSite(ctx.faults.dir, ctx.checkpoint))
        _watchers[key].start()
    return writer.format("console").option("numRows", "1000000").option("truncate", "false")


def console_read(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Every table in the logs of this run's drivers: the directory of this driver's own stderr log
    (a run's ``logs/``, or a shared driver pool's directory)."""
    logs = sorted(Path(os.readlink("/proc/self/fd/2")).parent.glob("driver-*.log"))
    rows = []
    for log in logs:
        for tables in parse_console(log.read_text(errors="replace")).values():
            for header, *body in tables:
                rows += [{h: int(v) for h, v in zip(header, cells, strict=False)} for cells in body]
    return _rows_frame(spark, rows, schema)


def _scenario(name: str, summary: str, guarantee: str, points: tuple[str, ...], attach: Any, read: Any) -> Scenario:
    return Scenario(
        name=name,
        summary=summary,
        guarantee=guarantee,
        kill_points=points,
        transform=transform,
        attach_sink=attach,
        read_output=read,
        max_rows_per_batch=20,
        rows_per_round=(20, 30),
    )


FOREACH = _scenario(
    "certify_foreach",
    "replayable -> foreach (naive appending ForeachWriter)",
    "at-least-once",
    ("after_offsets_logged", "sink.commit.after"),
    foreach_attach,
    foreach_read,
)
MEMORY = _scenario(
    "certify_memory",
    "replayable -> memory sink (append)",
    "none",
    ("after_offsets_logged",),
    memory_attach,
    memory_read,
)
CONSOLE = _scenario(
    "certify_console",
    "replayable -> console sink",
    "none",
    ("after_offsets_logged", "sink.commit.after"),
    console_attach,
    console_read,
)
