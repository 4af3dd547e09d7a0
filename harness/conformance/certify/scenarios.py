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
  watcher thread in the driver once batch N's table is completely printed.
  Spark writes ``commits/N`` right after printing, so the watcher does not race
  it: once ``Batch: N`` appears it stops the driver's JVM (SIGSTOP) and lets it
  run in slices of ``SLICE_S`` until the table is complete, then fires with the
  JVM still stopped. The ledger's ``commit_logged`` says whether ``commits/N``
  was written all the same (a header and table printed within one poll).
  Reading back reads each driver's log from where it stood when the query
  started (recorded in the output directory).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.crash import FaultSite
from harness.conformance.sink.task_sim import COLUMNS
from harness.spark.procs import child_jvm_pids, signal_all
from scenarios.base import Scenario, SinkContext

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType


def transform(df: DataFrame) -> DataFrame:
    return df.select(*COLUMNS)


def _rows_frame(spark: SparkSession, rows: list[dict[str, Any]], schema: StructType) -> DataFrame:
    return spark.createDataFrame([tuple(r.get(c) for c in schema.names) for r in rows], schema)


class AppendingForeachWriter:
    """A naive foreach writer: no batch-id bookkeeping, rows appended as they come."""

    #: It fires ``sink.commit.after`` itself: the harness does not wrap it again (fault_injectors.autowrap).
    __harness_instrumented__ = True

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


SLICE_S = 0.0002


class ConsoleWatcher(threading.Thread):
    """Fires ``sink.commit.after`` of batch N as soon as batch N's table is complete in ``log``, with the
    driver's JVM stopped from the moment ``Batch: N`` appears (so ``commits/N`` cannot be written first)."""

    def __init__(self, log: Path, site: FaultSite) -> None:
        super().__init__(name="harness-console-watcher", daemon=True)
        self.log, self.site, self.offset = log, site, log.stat().st_size
        self.frozen: list[int] = []

    def _armed_header(self, seen: str) -> bool:
        return any(
            self.site.armed("sink.commit.after", int(m.group(1)))
            for m in (HEADER.match(line.strip()) for line in seen.splitlines())
            if m
        )

    def run(self) -> None:
        seen = ""
        try:
            while self.site.armed_at("sink.commit.after"):
                try:
                    with open(self.log, encoding="utf-8", errors="replace") as f:
                        f.seek(self.offset)
                        seen += f.read()
                        self.offset = f.tell()
                except OSError:
                    return
                if not self.frozen and self._armed_header(seen):
                    self.frozen = child_jvm_pids()
                    signal_all(self.frozen, signal.SIGSTOP)
                    continue  # read what was printed before the stop
                for batch in parse_console(seen):
                    self.site.maybe_fire("sink.commit.after", batch, via="console-watcher")
                if self.frozen:
                    signal_all(self.frozen, signal.SIGCONT)
                    time.sleep(SLICE_S)
                    signal_all(self.frozen, signal.SIGSTOP)
                else:
                    time.sleep(0.001)
        finally:
            signal_all(self.frozen, signal.SIGCONT)


_watchers: dict[str, ConsoleWatcher] = {}


STARTS = "console-starts.jsonl"


def console_attach(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """The console sink; records in the run's output directory where this driver's log stands now, so
    reading back sees this run's tables only (a shared driver pool's log also holds earlier runs')."""
    log = Path(os.readlink("/proc/self/fd/2"))
    Path(ctx.output).mkdir(parents=True, exist_ok=True)
    with open(Path(ctx.output) / STARTS, "a") as f:
        f.write(json.dumps({"log": str(log), "offset": log.stat().st_size if log.is_file() else 0}) + "\n")
    key = str(ctx.faults.dir)
    alive = _watchers.get(key)
    if log.is_file() and ctx.faults.armed_at("sink.commit.after") and not (alive and alive.is_alive()):
        _watchers[key] = ConsoleWatcher(log, FaultSite(ctx.faults.dir, ctx.checkpoint))
        _watchers[key].start()
    return writer.format("console").option("numRows", "1000000").option("truncate", "false")


def console_read(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Every table printed since each of this run's driver starts (each log read from the earliest offset
    recorded for it)."""
    starts: dict[str, int] = {}
    path = Path(ctx.output) / STARTS
    for line in path.read_text().splitlines() if path.exists() else []:
        entry = json.loads(line)
        starts[entry["log"]] = min(entry["offset"], starts.get(entry["log"], entry["offset"]))
    rows = []
    for log, offset in sorted(starts.items()):
        with open(log, encoding="utf-8", errors="replace") as f:
            f.seek(offset)
            text = f.read()
        for tables in parse_console(text).values():
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


def _committed_values(read: Any) -> Any:
    """``read`` keeping the rows up to the newest committed epoch (:meth:`scenarios.rate.RateSource.committed_only`)."""
    from scenarios.library.rate_continuous import PARTITIONS
    from scenarios.rate import RateSource

    def committed(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
        return RateSource.committed_only(read(spark, ctx, schema), ctx.checkpoint, PARTITIONS)

    return committed


def _continuous(name: str, sink: str, attach: Any, read: Any) -> Scenario:
    """``rate_continuous`` (continuous processing) into ``sink`` instead of the Kafka sink."""
    from scenarios.library import rate_continuous

    return dataclasses.replace(
        rate_continuous.SCENARIO,
        name=name,
        summary=f"rate -> map -> {sink}, continuous processing",
        guarantee="none",
        transform=rate_continuous.transform,
        attach_sink=attach,
        read_output=_committed_values(read),
        resource=None,
    )


def continuous_memory_read(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.table("harness_certify_continuous_memory").select(*schema.names)


CONTINUOUS_MEMORY = _continuous("certify_continuous_memory", "memory sink", memory_attach, continuous_memory_read)
CONTINUOUS_CONSOLE = _continuous("certify_continuous_console", "console sink", console_attach, console_read)
