"""The Spark half of ``upgrade-check``: resume the new pipeline on a copy of the checkpoint, and record what
Spark said.

Contracts:

- The checkpoint itself is never written: every run is on a copy in ``work``.
- No new data is processed: the copy's newest batch is made pending again (its ``commits/N`` removed, unless it
  is pending already) and the new query runs with ``Trigger.Once``, which replays exactly that batch from its
  logged offsets. Its output goes to Spark's ``noop`` sink, so nothing external is written either.
- Pass 1 runs every check Spark makes at a restart (source count, operator metadata, state schemas). When it
  accepts, pass 2 replays the batch again on a fresh copy without the state schema files, so Spark writes the
  new query's schemas, for the pure half (:mod:`harness.upgrade.decide`) to compare with the old ones.
- A :class:`Probe` is plain data with a JSON round trip: saved next to a checkpoint, it lets the decision be
  re-made without Spark.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.inspector import batch_ids
from harness.inspector.state_schema import read_state_schemas

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: ``(spark, checkpoint copy) -> the new pipeline's streaming DataFrame`` (before ``writeStream``).
StreamFn = Callable[["SparkSession", Path], "DataFrame"]


class ProbeError(RuntimeError):
    """The checkpoint cannot be probed (no batch, unreadable); the message says which file and why."""


@dataclass(frozen=True)
class Probe:
    """What Spark did with the new pipeline: ``accepted`` the replay of ``batch`` or refused it with ``message``;
    ``schemas``: the stores' schemas the new query wrote (pass 2), as ``{where: {"key": ..., "value": ...}}``;
    ``confs``: the session's values of the confs the checkpoint's offset log records."""

    batch: int
    accepted: bool
    message: str | None = None
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    confs: dict[str, str] = field(default_factory=dict)

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2, sort_keys=True))

    @classmethod
    def load(cls, path: Path) -> Probe:
        return cls(**json.loads(path.read_text()))


def pending_batch(checkpoint: Path) -> tuple[int, bool]:
    """The batch a replay runs: the newest planned one, and whether its commit must be removed first."""
    planned, committed = batch_ids(checkpoint / "offsets"), batch_ids(checkpoint / "commits")
    if not planned:
        raise ProbeError(f"{checkpoint / 'offsets'}: no batch was ever planned; there is nothing to resume")
    newest = planned[-1]
    return newest, bool(committed) and committed[-1] == newest


def _copy(checkpoint: Path, dest: Path, batch: int, uncommit: bool, schemas: bool) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(checkpoint, dest)
    if uncommit:
        for name in (str(batch), f".{batch}.crc"):
            (dest / "commits" / name).unlink(missing_ok=True)
    if not schemas:
        for path in (dest / "state").glob("*/**/_metadata/schema"):
            path.unlink()
            path.with_name(".schema.crc").unlink(missing_ok=True)
    return dest


#: Output modes a probe tries, in order: the first the new query's plan allows (noop takes all three).
OUTPUT_MODES = ("append", "update", "complete")


def _replay(spark: SparkSession, stream: StreamFn, copy: Path) -> str | None:
    """Run the new query once on ``copy`` into ``noop``; Spark's error message, or ``None`` when it committed.
    The output mode is the first of :data:`OUTPUT_MODES` Spark's analysis accepts for the query (an aggregation
    without a watermark cannot append), as production's own writer must have chosen one it accepts."""
    message = None
    for mode in OUTPUT_MODES:
        message = _replay_in(spark, stream, copy, mode)
        if message is None or "[STREAMING_OUTPUT_MODE" not in message:
            return message
    return message


def _replay_in(spark: SparkSession, stream: StreamFn, copy: Path, mode: str) -> str | None:
    from pyspark.errors import PySparkException

    try:
        query = (
            stream(spark, copy)
            .writeStream.format("noop")
            .outputMode(mode)
            .option("checkpointLocation", str(copy))
            .trigger(once=True)
            .queryName("harness_upgrade_check")
            .start()
        )
        query.awaitTermination()
    except PySparkException as exc:
        return str(exc).split("\n=== Streaming Query ===")[0]
    error = query.exception()
    return None if error is None else str(error).split("\n=== Streaming Query ===")[0]


def probe(
    spark: SparkSession, checkpoint: Path, stream: StreamFn, work: Path, conf_keys: list[str], asked: dict[str, str]
) -> Probe:
    """Resume ``stream`` on copies of ``checkpoint`` (in ``work``) as the module docstring says. ``asked``: confs
    the new version sets explicitly; those of ``conf_keys`` its code sets while building the query count too."""
    batch, uncommit = pending_batch(checkpoint)
    first = _copy(checkpoint, work / "pass-1", batch, uncommit, schemas=True)
    before = {k: spark.conf.get(k, None) for k in conf_keys}
    message = _replay(spark, stream, first)
    confs = {k: v for k, v in asked.items() if k in conf_keys}
    confs |= {k: v for k in conf_keys if (v := spark.conf.get(k, None)) is not None and v != before[k]}
    if message is None and batch not in batch_ids(first / "commits"):
        message = f"the new query stopped without committing batch {batch} (nothing was checked)"
    if message is not None:
        return Probe(batch, False, message, confs=confs)
    second = _copy(checkpoint, work / "pass-2", batch, uncommit, schemas=False)
    again = _replay(spark, stream, second)
    schemas = {} if again else {s.where: {"key": s.key, "value": s.value} for s in read_state_schemas(second)}
    return Probe(batch, True, None, schemas, confs)
