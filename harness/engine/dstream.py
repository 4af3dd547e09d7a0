"""Running a DStream scenario in the child driver: ``getOrCreate`` recovery, publishing, waiting, stopping.

One ``run`` command: the application's ``StreamingContext`` comes from the run's checkpoint when it holds one
(the whole graph and the pending batches, as ``StreamingContext.getOrCreate`` restores them), else from the
scenario's setup function, checked before it starts (:func:`checked_setup`). Once it runs, the files of the rounds
added since the last run are published in one batch (:mod:`fault_injectors.dstream`); the command answers when the
observer has seen every round's batch and no batch is pending, after a graceful ``stop`` that keeps the pooled
``SparkContext``. A batch that fails (an injected fault, an error in the user's function) fails the command.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.dstream import (
    BATCHES_FILE,
    OBSERVED_FILE,
    RUN_ENV,
    Registered,
    batch_time_for,
    observe,
    patched_foreach_rdd,
)
from harness.engine.progress import append_event
from harness.engine.rundir import RunPaths
from harness.errors import HarnessFailure, Observed, UsageError
from harness.verdict.dstream_marks import DSTREAM_BATCHES
from scenarios.filedir import file_name, parse_name, published_ends
from scenarios.tap import read_tap

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.streaming import StreamingContext

    from scenarios.dstream import DStreamContext, DStreamScenario
    from scenarios.sources import SourceRun

#: How long before its batch time a round's files must be in place (renames take a few ms).
PUBLISH_MARGIN_MS = 400


class SetupRefused(UsageError, ValueError):
    """The scenario's setup function built an application the harness cannot run (bad input: one line)."""


class FeedMissed(HarnessFailure, RuntimeError):
    """The harness's own observer read less of a round's batch than the harness published for it: the input
    never reached the application, so no verdict can blame the pipeline (the run ends as no verdict)."""


def _unread(record: dict[str, Any], items: list[dict[str, Any]]) -> str:
    """Why ``record`` (the observer's batch) shows the feed missed the files published for its batch; ``""``
    when it read them all."""
    entry = next((e for e in items if int(e["batch"]) == int(record["batch"])), None)
    if entry is None:
        return ""
    published: dict[str, list[int]] = {}
    for name in entry["files"]:
        parsed = parse_name(name)
        if parsed is not None and parsed[2] > parsed[1]:
            p, start, end = parsed
            lo, hi = published.get(str(p), [start, end])
            published[str(p)] = [min(lo, start), max(hi, end)]
    seen = record.get("ranges") or {}
    short = [p for p, (lo, hi) in published.items() if not (seen.get(p) and seen[p][0] <= lo and seen[p][1] >= hi)]
    if not short:
        return ""
    files = [f for f in entry["files"] if (parsed := parse_name(f)) is not None and str(parsed[0]) in short]
    return (
        f"DStream batch {record['batch']} (batch time {record['time_ms']}) read {record.get('rows', 0)} row(s), "
        f"but the harness published {', '.join(files)} for it: the input never reached the application, so "
        "nothing can be said of the pipeline (the harness's feed, not the pipeline: no verdict)"
    )


class AppFailed(Observed, RuntimeError):
    """The DStream application failed a batch, or its checkpoint could not be recovered."""


def _java_line(exc: BaseException) -> str:
    """The first line of a Java error's message (a Py4J error carries the whole stack trace)."""
    java = getattr(exc, "java_exception", None)
    text = str(java.getMessage()) if java is not None else str(exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def has_checkpoint(checkpoint: Path) -> bool:
    """Whether ``checkpoint`` holds a ``StreamingContext`` checkpoint file (``checkpoint-<time>[.bk]``)."""
    return checkpoint.is_dir() and any(p.name.startswith("checkpoint-") for p in checkpoint.iterdir())


def _local(uri: str) -> Path:
    return Path(uri.removeprefix("file://").removeprefix("file:")).resolve()


def checked_setup(sc: SparkContext, scenario: DStreamScenario, ctx: DStreamContext) -> StreamingContext:
    """The scenario's setup function's context with the harness's observer added; :class:`SetupRefused` for one
    that checkpoints nowhere (or elsewhere), uses another batch interval than ``ctx.batch_seconds``, reads a
    ``queueStream`` or another input than ``ctx.input_dir``'s text files, or registers no output operation."""
    from pyspark.streaming import StreamingContext

    assert scenario.setup is not None
    where = f"scenario {scenario.name}: its setup function"
    with patched_foreach_rdd() as registered:
        ssc = scenario.setup(sc, ctx)
    if not isinstance(ssc, StreamingContext):
        raise SetupRefused(f"{where} returned {type(ssc).__name__}, not the StreamingContext it built")
    problem = _problem(ssc, ctx, registered)
    if problem:
        ssc.stop(stopSparkContext=False)
        raise SetupRefused(f"{where} {problem}")
    ssc.textFileStream(ctx.input_dir).foreachRDD(observe)  # registered last: runs after the user's outputs
    return ssc


def _problem(ssc: StreamingContext, ctx: DStreamContext, registered: Registered) -> str:
    jssc = ssc._jssc.ssc()
    interval_ms = int(jssc.graph().batchDuration().milliseconds())
    if interval_ms != ctx.batch_seconds * 1000:
        return (
            f"builds a StreamingContext with a {interval_ms} ms batch interval; the scenario's batch_seconds is "
            f"{ctx.batch_seconds}: use StreamingContext(sc, ctx.batch_seconds)"
        )
    checkpoint = jssc.checkpointDir()
    if checkpoint is None:
        return (
            "sets no checkpoint: call ssc.checkpoint(ctx.checkpoint) in it, or getOrCreate recovers nothing "
            "(stateful DStreams refuse to start without one)"
        )
    if _local(str(checkpoint)) != Path(ctx.checkpoint).resolve():
        return f"checkpoints to {checkpoint}; use ctx.checkpoint ({ctx.checkpoint}), the run's checkpoint directory"
    for stream in jssc.graph().getInputStreams():
        kind = str(stream.getClass().getSimpleName())
        if kind == "QueueInputDStream":
            return (
                "reads a queueStream, which cannot be checkpointed (Spark cannot recover it after a restart); "
                "read ctx.input_dir with ssc.textFileStream"
            )
        if kind != "FileInputDStream":
            return f"reads a {kind}; the harness feeds ctx.input_dir only: read it with ssc.textFileStream"
    if not list(jssc.graph().getInputStreams()):
        return "reads no input: read ctx.input_dir with ssc.textFileStream"
    elsewhere = [d for d in registered.directories if _local(d) != Path(ctx.input_dir).resolve()]
    if elsewhere:
        return f"reads {elsewhere[0]}; the harness feeds ctx.input_dir ({ctx.input_dir}): read that directory"
    if not registered.outputs:
        return "registers no output operation (foreachRDD, saveAsTextFiles, ...): nothing could be checked"
    return ""


def recover(sc: SparkContext, checkpoint: Path) -> StreamingContext:
    """The application restored from ``checkpoint``, as ``getOrCreate`` restores it; :class:`AppFailed` naming
    the checkpoint when Spark cannot read it."""
    from pyspark.streaming import StreamingContext

    def no_setup() -> StreamingContext:
        raise AppFailed(f"checkpoint {checkpoint} holds no readable StreamingContext checkpoint")

    try:
        return StreamingContext.getOrCreate(str(checkpoint), no_setup)
    except AppFailed:
        raise
    except Exception as exc:  # Spark's own refusal, e.g. "Failed to read checkpoint from directory ..."
        raise AppFailed(f"getOrCreate could not recover {checkpoint}: {_java_line(exc)}") from None


def entries(root: Path) -> list[dict[str, Any]]:
    """``dstream/batches.json``: per round's batch, ``batch``, ``time_ms`` and ``files``."""
    path = root / BATCHES_FILE
    return list(json.loads(path.read_text())) if path.exists() else []


def _save_entries(root: Path, items: list[dict[str, Any]]) -> None:
    path = root / BATCHES_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(items, indent=1))
    os.replace(tmp, path)


def finish_round(scenario: DStreamScenario, run: SourceRun, root: Path) -> dict[str, Any] | None:
    """Before the context starts: the files of a round a killed driver did not finish publishing, placed with
    that round's own batch time (the recovered context runs that time as a downtime batch); the entry, or
    ``None`` when every round is complete."""
    items = entries(root)
    d = Path(run.input_dir)
    missing = [f for f in items[-1]["files"] if not (d / f).exists()] if items else []
    if not missing:
        return None
    scenario.source.place(run, missing, int(items[-1]["time_ms"]) - 1)  # type: ignore[attr-defined]
    return items[-1]


def publish_round(scenario: DStreamScenario, run: SourceRun, root: Path) -> dict[str, Any] | None:
    """Publish what the tap holds and the directory lacks as the next batch's files; the entry (written before
    the files appear: the wrappers number the batch by it), or ``None`` when there is nothing new. The batch
    time is chosen once the files are staged, so only their renames stand between it and now."""
    items = entries(root)
    done, tap = published_ends(run.input_dir), read_tap(run.tap)
    files = [file_name(p, done.get(p, 0), end, "json") for p, end in sorted(tap.items()) if end > done.get(p, 0)]
    if not files:
        return None
    entry: dict[str, Any] = {"batch": len(items), "files": files}

    def timed() -> int:
        entry["time_ms"] = batch_time_for(int(time.time() * 1000), scenario.batch_seconds * 1000, PUBLISH_MARGIN_MS)
        _save_entries(root, [*items, entry])
        return int(entry["time_ms"]) - 1

    scenario.source.place(run, files, timed)  # type: ignore[attr-defined]
    return entry


def observed(root: Path) -> list[dict[str, Any]]:
    """The observer's records (``dstream/observed.jsonl``), in the order written."""
    path = root / OBSERVED_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_app(
    sc: SparkContext,
    paths: RunPaths,
    scenario: DStreamScenario,
    run: SourceRun,
    ctx: DStreamContext,
    events: Path | None,
    timeout_s: float,
) -> dict[str, Any]:
    """One ``run`` command (see the module): ``{"event": "caught_up", "batches": [...]}``."""
    os.environ[RUN_ENV] = str(paths.root)
    (paths.root / "dstream").mkdir(exist_ok=True)
    Path(ctx.input_dir).mkdir(parents=True, exist_ok=True)
    recovered = has_checkpoint(paths.checkpoint)
    ssc = recover(sc, paths.checkpoint) if recovered else checked_setup(sc, scenario, ctx)
    seen = len(observed(paths.root))
    finish_round(scenario, run, paths.root)
    ssc.start()
    try:
        if not recovered:  # files published before a context's first checkpoint are lost to a kill before it
            _first_checkpoint(ssc, paths.checkpoint, time.monotonic() + 10 * scenario.batch_seconds + 10)
        entry = publish_round(scenario, run, paths.root)
        batches = _wait(ssc, paths.root, seen, events, time.monotonic() + timeout_s, scenario.batch_seconds)
    except BaseException:
        ssc.stop(stopSparkContext=False, stopGraceFully=False)
        raise
    ssc.stop(stopSparkContext=False, stopGraceFully=True)
    return {"event": "caught_up", "batches": batches, "recovered": recovered, "published": entry}


def _first_checkpoint(ssc: Any, checkpoint: Path, deadline: float) -> None:
    """Wait until a fresh context has written its first checkpoint file: a driver killed later recovers it
    (``getOrCreate``) and reads the files published since, where a fresh context would ignore them (a
    ``textFileStream`` only takes files newer than its start)."""
    while not has_checkpoint(checkpoint):
        try:
            ssc.awaitTerminationOrTimeout(0.05)
        except Exception as exc:
            raise AppFailed(f"the DStream application failed before its first batch: {_java_line(exc)}") from None
        if time.monotonic() > deadline:
            raise TimeoutError(f"the DStream application wrote no checkpoint into {checkpoint} in time")


def _wait(ssc: Any, root: Path, seen: int, events: Path | None, deadline: float, batch_s: int) -> list[int]:
    """Until every round's batch was observed, no batch is pending and one batch interval passed the last
    round's time; the batch numbers observed meanwhile. ``AppFailed`` with Spark's error when a batch failed."""
    want = {int(e["batch"]) for e in entries(root)}
    last_ms = max((int(e["time_ms"]) for e in entries(root)), default=0)
    got: list[int] = []
    while True:
        try:
            ssc.awaitTerminationOrTimeout(0.1)
        except Exception as exc:
            raise AppFailed(f"a DStream batch failed: {_java_line(exc)}") from None
        records = observed(root)
        for record in records[seen:]:
            if record.get("batch") is None and record.get("rows"):
                raise RuntimeError(
                    f"a DStream batch at {record['time_ms']} read {record['rows']} row(s) of no round's batch time: "
                    "the harness published files too late for their batch (a machine too loaded for "
                    f"PUBLISH_MARGIN_MS = {PUBLISH_MARGIN_MS}); the run proves nothing, run it again"
                )
            if record.get("batch") is not None:
                if missed := _unread(record, entries(root)):
                    raise FeedMissed(missed)
                got.append(int(record["batch"]))
                if events is not None:
                    start = {p: r[0] for p, r in record["ranges"].items()}
                    end = {p: r[1] for p, r in record["ranges"].items()}
                    value = {"batch_id": record["batch"], "rows": record["rows"], "start": start, "end": end}
                    append_event(events, "batch", {**value, "time_ms": record["time_ms"]})
        seen = len(records)
        done = want <= {r.get("batch") for r in records}
        pending = ssc._jssc.ssc().scheduler().getPendingTimes().size()
        if done and pending == 0 and time.time() * 1000 > last_ms + batch_s * 1000:
            return got
        if time.monotonic() > deadline:
            missing = sorted(want - {r.get("batch") for r in records})
            raise TimeoutError(f"DStream batch(es) {missing} not observed in time ({pending} batch(es) pending)")


def write_batches(root: Path, oracle: Path) -> None:
    """``oracle/dstream_batches.json``: every round's batch (number, time, files) with the observer's ranges."""
    seen: dict[int, dict[str, Any]] = {}
    stray = []
    for record in observed(root):
        if record.get("batch") is None:
            stray.append(record)  # files a batch read that no round's batch time named
        else:
            seen[int(record["batch"])] = record
    out = [
        {**e, "observed": seen.get(int(e["batch"]), {}).get("ranges"), "done": int(e["batch"]) in seen}
        for e in entries(root)
    ]
    (oracle / DSTREAM_BATCHES).write_text(json.dumps({"batches": out, "stray": stray}, indent=1))
