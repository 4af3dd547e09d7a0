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
    #: The query never started in any output mode (it does not analyse, or the pipeline's code raised): no
    #: restart check ran, so nothing is known about the checkpoint.
    not_started: bool = False
    #: Pass 2 (the new schemas) failed after pass 1 accepted: its error; the schemas are then unknown.
    schema_error: str | None = None

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


def _replay(spark: SparkSession, stream: StreamFn, copy: Path, modes: tuple[str, ...]) -> tuple[str | None, bool]:
    """Run the new query once on ``copy`` into ``noop``: ``(Spark's error message or None when it committed,
    whether the query never started)``. The output mode is the first of ``modes`` the query starts in (an
    aggregation without a watermark cannot append, a sort needs complete), as production's writer must use one
    its query starts in; the restart checks run once it has started."""
    message: str | None = None
    for mode in modes:
        message, started = _replay_in(spark, stream, copy, mode)
        if started:
            return message, False
    return message, True


def _replay_in(spark: SparkSession, stream: StreamFn, copy: Path, mode: str) -> tuple[str | None, bool]:
    from pyspark.errors import PySparkException

    try:
        frame = stream(spark, copy)
    except Exception as exc:  # the pipeline's own code: said in one line, not a traceback
        return f"the new pipeline's code raised {type(exc).__name__}: {exc}", False
    try:
        query = (
            frame.writeStream.format("noop")
            .outputMode(mode)
            .option("checkpointLocation", str(copy))
            .trigger(once=True)
            .queryName("harness_upgrade_check")
            .start()
        )
    except (PySparkException, AttributeError) as exc:  # analysis: the plan does not start in this mode
        return str(exc).split("\n=== Streaming Query ===")[0], False
    try:
        query.awaitTermination()
    except PySparkException:
        pass  # the restart's failure: query.exception() has it
    error = query.exception()
    return (None if error is None else str(error).split("\n=== Streaming Query ===")[0]), True


def probe(
    spark: SparkSession,
    checkpoint: Path,
    stream: StreamFn,
    work: Path,
    conf_keys: list[str],
    asked: dict[str, str],
    modes: tuple[str, ...] = OUTPUT_MODES,
) -> Probe:
    """Resume ``stream`` on copies of ``checkpoint`` (in ``work``) as the module docstring says. ``asked``: confs
    the new version sets explicitly; those of ``conf_keys`` its code sets while building the query count too."""
    batch, uncommit = pending_batch(checkpoint)
    first = _copy(checkpoint, work / "pass-1", batch, uncommit, schemas=True)
    before = {k: spark.conf.get(k, None) for k in conf_keys}
    message, not_started = _replay(spark, stream, first, modes)
    confs = {k: v for k, v in asked.items() if k in conf_keys}
    confs |= {k: v for k in conf_keys if (v := spark.conf.get(k, None)) is not None and v != before[k]}
    if message is None and batch not in batch_ids(first / "commits"):
        message = f"the new query stopped without committing batch {batch} (nothing was checked)"
    if message is not None:
        return Probe(batch, False, message, confs=confs, not_started=not_started)
    second = _copy(checkpoint, work / "pass-2", batch, uncommit, schemas=False)
    again, _ = _replay(spark, stream, second, modes)
    if again is not None:
        return Probe(batch, True, None, {}, confs, schema_error=again.splitlines()[0])
    schemas = {s.where: {"key": s.key, "value": s.value} for s in read_state_schemas(second)}
    return Probe(batch, True, None, schemas, confs)
