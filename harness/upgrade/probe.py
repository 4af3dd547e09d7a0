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

from harness.errors import HarnessFailure
from harness.inspector import batch_ids
from harness.inspector.state_schema import read_state_schemas

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: ``(spark, checkpoint copy) -> the new pipeline's streaming DataFrame`` (before ``writeStream``).
StreamFn = Callable[["SparkSession", Path], "DataFrame"]


class ProbeError(HarnessFailure, RuntimeError):
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
    #: The file sink the new version writes, when known: ``{"path": ..., "latest": N}``, ``latest`` the newest
    #: batch of its log (``_spark_metadata``), ``None`` when the directory holds no log. ``None``: not known.
    sink: dict[str, Any] | None = None
    #: How Spark describes each source of the new query in its progress (``KafkaV2[Subscribe[topic]]``): what
    #: it would read next, to compare with the sources the checkpoint's offsets are of.
    sources: list[str] = field(default_factory=list)
    #: The probe could not replay the pending batch (Spark 4.2.0 cannot, in a query with source evolution) and
    #: restarted after it instead: Spark's start-up checks ran; the next batch ran only if new data had come.
    after_batch: bool = False

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2, sort_keys=True))

    @classmethod
    def load(cls, path: Path) -> Probe:
        return cls(**json.loads(path.read_text()))


def file_sink_facts(path: str | None, spark: SparkSession | None = None) -> dict[str, Any] | None:
    """:attr:`Probe.sink` for a file sink writing to ``path``; ``None`` without one. A local path (or ``file:``
    URI) is listed directly; another scheme (``s3a://``, ``abfss://``, ``hdfs://``) through ``spark``'s Hadoop
    file system, which needs that scheme's connector on the session's class path (``OSError`` otherwise)."""
    if path is None:
        return None
    scheme = path.split("://", 1)[0] if "://" in path else "file"
    if scheme == "file":
        local = Path(path.removeprefix("file://").removeprefix("file:"))
        logged = batch_ids(local / "_spark_metadata")
    else:
        logged = _remote_batch_ids(path.rstrip("/") + "/_spark_metadata", spark)
    return {"path": path, "latest": logged[-1] if logged else None}


def _remote_batch_ids(log_dir: str, spark: SparkSession | None) -> list[int]:
    if spark is None:
        raise OSError(f"{log_dir}: a remote sink path is read through Spark, and no session was given")
    try:
        jvm = spark.sparkContext._jvm
        hadoop_path = jvm.org.apache.hadoop.fs.Path(log_dir)  # type: ignore[union-attr]
        fs = hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
        names = [s.getPath().getName() for s in fs.listStatus(hadoop_path)] if fs.exists(hadoop_path) else []
    except Exception as exc:  # py4j: a missing connector or credentials, in one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OSError(f"cannot list the sink log {log_dir}: {first}") from None
    stems = (n.removesuffix(".compact") for n in names)
    return sorted(int(n) for n in stems if n.isascii() and n.isdigit())


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


def offset_log_v2(checkpoint: Path) -> bool:
    """Whether the checkpoint's newest offset log entry is version 2 (source evolution: offsets keyed by name)."""
    newest = batch_ids(checkpoint / "offsets")[-1]
    return (checkpoint / "offsets" / str(newest)).read_text().startswith("v2")


def _cannot_replay(message: str, copy: Path) -> bool:
    return message.strip().endswith("None.get") and offset_log_v2(copy)


#: Output modes a probe tries, in order: the first the new query's plan allows (noop takes all three).
OUTPUT_MODES = ("append", "update", "complete")


def _replay(
    spark: SparkSession, stream: StreamFn, copy: Path, modes: tuple[str, ...], seen: list[str] | None = None
) -> tuple[str | None, bool]:
    """Run the new query once on ``copy`` into ``noop``: ``(Spark's error message or None when it committed,
    whether the query never started)``. The output mode is the first of ``modes`` the query starts in (an
    aggregation without a watermark cannot append, a sort needs complete), as production's writer must use one
    its query starts in; the restart checks run once it has started."""
    message: str | None = None
    for mode in modes:
        message, started = _replay_in(spark, stream, copy, mode, seen)
        if started:
            return message, False
    return message, True


def _replay_in(
    spark: SparkSession, stream: StreamFn, copy: Path, mode: str, seen: list[str] | None = None
) -> tuple[str | None, bool]:
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
    if seen is not None and query.lastProgress:  # the sources' descriptions (the next batch's subscription)
        seen[:] = [str(src.get("description", "")) for src in query.lastProgress.get("sources", [])]
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
    described: list[str] = []
    message, not_started = _replay(spark, stream, first, modes, described)
    after = False
    if message is not None and _cannot_replay(message, first) and uncommit:
        # Spark 4.2.0 cannot restart a source-evolution query over a pending batch (None.get in
        # OfflineStateRepartitionUtils.isRepartitionBatch), upgrade or not: restart after the batch instead.
        first, after = _copy(checkpoint, work / "pass-1", batch, False, schemas=True), True
        message, not_started = _replay(spark, stream, first, modes, described)
    confs = {k: v for k, v in asked.items() if k in conf_keys}
    confs |= {k: v for k in conf_keys if (v := spark.conf.get(k, None)) is not None and v != before[k]}
    if message is None and batch not in batch_ids(first / "commits"):
        message = f"the new query stopped without committing batch {batch} (nothing was checked)"
    if message is not None:
        return Probe(batch, False, message, confs=confs, not_started=not_started, after_batch=after)
    if after:  # pass 2 would need the same replay: the new schemas stay unknown (a stateless query has none)
        return Probe(batch, True, None, {}, confs, after_batch=True, sources=described)
    second = _copy(checkpoint, work / "pass-2", batch, uncommit, schemas=False)
    again, _ = _replay(spark, stream, second, modes)
    if again is not None:
        return Probe(batch, True, None, {}, confs, schema_error=again.splitlines()[0])
    schemas = {s.where: {"key": s.key, "value": s.value} for s in read_state_schemas(second)}
    return Probe(batch, True, None, schemas, confs, sources=described)
