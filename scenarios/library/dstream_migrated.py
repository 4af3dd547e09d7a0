""":mod:`scenarios.library.dstream_foreach` migrated to Structured Streaming: the same pipeline, the same output.

Purpose: the other side of a move off DStreams (``docs/dstreams.md``). Spark's JSON file source reads the same
published files, the same ``transform`` keeps ``key % 4 != 0`` and adds ``doubled``, and a ``foreachBatch``
function writes each batch to ``batch-<batch id>.jsonl`` (hidden, then renamed): idempotent by batch id, as the
DStream twin is by batch time. ``:NAIVE`` appends every batch to ``rows.jsonl``, as ``dstream_foreach_naive`` does.
Faults: ``after_offsets_logged`` (the batch is planned, nothing written: the DStream twin's ``dstream.batch.start``)
and ``sink.commit.after`` (the function returned, ``commits/N`` not written: ``dstream.batch.end``), and
``sink.step`` faults inside the function. Same seed, same rounds, same rows and batches as the DStream twin.
Guarantee checked: exactly-once (``:NAIVE``: duplicates after a kill at ``sink.commit.after``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import Scenario, SinkContext
from scenarios.library.dstream_foreach import read_output, transform
from scenarios.sources import FileDirectory

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming.readwriter import DataStreamWriter


def _lines(batch_df: DataFrame) -> str:
    return "".join(f"{line}\n" for line in batch_df.toJSON().collect())


def write_batch(output: str, batch_df: DataFrame, batch_id: int) -> None:
    """Write batch ``batch_id`` to ``batch-<id>.jsonl``, hidden then renamed: a replay replaces its own file."""
    text = _lines(batch_df)
    if not text:
        return
    tmp = Path(output) / f".batch-{batch_id}.jsonl.tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, Path(output) / f"batch-{batch_id}.jsonl")


def append_batch(output: str, batch_df: DataFrame, batch_id: int) -> None:
    """Append batch ``batch_id`` to ``rows.jsonl`` (the bug: a replay appends it again)."""
    text = _lines(batch_df)
    with open(Path(output) / "rows.jsonl", "a") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _sink(write: Callable[[str, DataFrame, int], None]) -> Callable[[DataStreamWriter, SinkContext], DataStreamWriter]:
    def attach(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
        Path(ctx.output).mkdir(parents=True, exist_ok=True)
        output = ctx.output

        def each(batch_df: DataFrame, batch_id: int) -> None:
            write(output, batch_df, batch_id)

        return writer.foreachBatch(crash_injecting_foreach_batch(each, ctx.faults))

    return attach


SCENARIO = Scenario(
    name="dstream_migrated",
    summary="dstream_foreach in Structured Streaming: file source -> foreachBatch per batch id (exactly-once)",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged", "sink.commit.after"),
    transform=transform,
    attach_sink=_sink(write_batch),
    read_output=read_output,
    source=FileDirectory("json"),
    sink_steps=True,
)

NAIVE = dataclasses.replace(
    SCENARIO,
    name="dstream_migrated_naive",
    summary="dstream_foreach_naive in Structured Streaming: foreachBatch appending (expected: duplicates)",
    guarantee="at-least-once",
    attach_sink=_sink(append_batch),
)
