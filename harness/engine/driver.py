"""The child driver process: one SparkSession, commands from the runner.

Started by :mod:`harness.engine.pool` as ``python -m harness.engine.driver --master M
--confs JSON --incarnation K`` in a new session (process group); it serves
many run directories in turn, so a campaign pays for a JVM only after a hard
kill. Reads one JSON command per line on stdin and answers one JSON message
per line on a private copy of stdout (fd 1 itself is pointed at stderr so
nothing Spark prints can corrupt the protocol):

- ``{"cmd": "open", "run_dir": D}``: make D the current run (its spec names
  the scenario, or its ``source_run.json`` the source under test: see
  :func:`open_run`); answers ``{"event": "opened"}``.
- ``{"cmd": "run"}``: run the scenario's query with ``Trigger.AvailableNow``
  until it has caught up with the tap; answers ``{"event": "caught_up", ...}``.
- ``{"cmd": "check"}``: write the oracle's expected rows (batch transform over
  the whole tap) and the rows the sink made visible to ``oracle/*.parquet``.
- ``{"cmd": "warm"}``: start the Python workers with a throw-away query
  (a standby driver does this while it waits); answers ``{"event": "warmed"}``.
- ``{"cmd": "exit"}``: stop Spark and exit 0.

Errors answer ``{"event": "error", "message": ..., "traceback": ...}``.
Completed batches are appended to the open run's ``events/driver-K.jsonl`` as
they happen.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import json
import os
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from pyspark.errors import PySparkException, StreamingQueryException

from fault_injectors.autowrap import instrumented_writers
from fault_injectors.crash import FaultSite
from fault_injectors.kills import DRIVER_PGID_ENV
from fault_injectors.watcher import CheckpointWatcher
from harness.engine.deploy import committed_before, read_deployed, upgrade_expected
from harness.engine.dstream import AppFailed, SetupRefused, run_app, write_batches
from harness.engine.epochs import SPREAD_MAX_S, EpochQueryDied, run_epochs
from harness.engine.progress import ProgressLog, caught_up
from harness.engine.roundcheck import check_round_read
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.engine.trigger import run_trigger
from harness.errors import Observed
from harness.inspector import batch_ids, read_commit
from harness.inspector.spark_view import StateUnreadable, read_state_rows
from harness.spark.attach import ATTACH_WAIT_ENV, attached
from harness.spark.session import DEFAULT_MASTER, apply_run_confs, build_session, reader_session
from harness.spark.warm import warm
from harness.verdict.check import INPUT_BATCHES
from harness.verdict.deploy_marks import V1_EXPECTED
from harness.verdict.raised import BEFORE_QUERY, READING_BACK, pipeline_message, ref_roots
from harness.verdict.sink_versions import write_versions
from harness.verdict.state_check import ERROR, EXPECTED, OBSERVED, STATE_DIR, UNREADABLE, state_file
from scenarios import Scenario, SinkContext, get_scenario
from scenarios.base import RUN_OUTPUT_ENV, OracleContext
from scenarios.dstream import DStreamScenario
from scenarios.sources import SourceRun

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class QueryFailed(Observed, RuntimeError):
    """The streaming query itself terminated with an exception."""


class PipelineRaised(QueryFailed):
    """The pipeline's own code raised in the driver outside a running query (its transform or sink set-up before
    the query started, its ``read_output`` or oracle after): the message says when, then Python's traceback, which
    the runner reads the pipeline's frame from (:func:`harness.engine.outcome.pipeline_failure`)."""


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, default=str) + "\n")
    out.flush()


class RunHandler(Protocol):
    """What the driver does for the open run directory."""

    def run(self) -> dict[str, Any]: ...

    def check(self) -> dict[str, Any]: ...


#: Handlers that moved, as run directories saved before the move name them (``source_run.json``'s
#: ``"handler"``) -> where they live now; saved bundles copy run directories, so they replay after a move.
MOVED_HANDLERS = {
    "harness.conformance.source_query:SourceQuery": "harness.conformance.source.query:SourceQuery",
}


def handler_class(ref: str, where: object = "source_run.json") -> Any:
    """The class a ``"module:Class"`` handler reference names (a moved one through :data:`MOVED_HANDLERS`);
    ``ValueError`` naming ``where`` when ``ref`` is not of that form."""
    module, _, attr = MOVED_HANDLERS.get(ref, ref).partition(":")
    if not module or not attr:
        raise ValueError(f"{where}: 'handler' must name the run's handler as 'module:Class'")
    return getattr(importlib.import_module(module), attr)


def open_run(paths: RunPaths, incarnation: int, spark: SparkSession, progress: ProgressLog | None) -> RunHandler:
    """The handler of the run in ``paths``: a scenario run (``spec.json``), or the handler that the run's
    ``source_run.json`` names as ``"handler": "module:Class"`` (a source under test feeding the parquet file
    sink: :mod:`harness.conformance.source.query`), called as ``Class(paths, incarnation, spark, progress)``.
    The engine names no caller's module: the run directory does (the one exception, :data:`MOVED_HANDLERS`,
    maps old references in saved run directories to their new homes)."""
    if paths.source_run.exists():
        ref = json.loads(paths.source_run.read_text()).get("handler", "")
        handler: RunHandler = handler_class(ref, paths.source_run)(paths, incarnation, spark, progress)
        return handler
    return Driver(paths, incarnation, spark, progress)


class Driver:
    """Runs one run directory's scenario query and oracle in a SparkSession.

    Used by the child driver process (``main``, which reuses one session for
    many run directories) and in process by tests with an existing ``spark``
    (then ``progress`` is usually ``None``: no events file is written)."""

    def __init__(
        self,
        paths: RunPaths,
        incarnation: int,
        spark: SparkSession | None = None,
        progress: ProgressLog | None = None,
    ) -> None:
        self.paths = paths
        self.spec = RunSpec.load(paths.spec)
        self.scenario: Scenario = get_scenario(self.spec.scenario)
        if spark is None:
            spark = build_session(f"harness-{self.spec.scenario}", self.spec.master, self.spec.confs)
        self.spark = spark
        self.progress = progress
        if progress is not None:
            progress.events_path = paths.driver_events(incarnation)
        resources = json.loads(paths.resources.read_text()) if paths.resources.exists() else {}
        self.ctx = SinkContext(
            str(paths.output), str(paths.checkpoint), FaultSite(paths.faults, paths.checkpoint), resources
        )
        self.config = self.scenario.source_config(self.spec.seed)

        self.source_run = SourceRun(
            config=self.config,
            tap=str(paths.tap),
            input_dir=str(paths.input),
            checkpoint=str(paths.checkpoint),
            fault_dir=str(paths.faults),
            max_rows_per_batch=self.spec.effective_batch_rows(self.scenario.max_rows_per_batch),
            write_points=self.scenario.source_write_points,
            resources=resources,
        )

    def run(self) -> dict[str, Any]:
        running = self.running()
        if isinstance(running, DStreamScenario):  # a DStream application (harness.engine.dstream)
            os.environ[RUN_OUTPUT_ENV] = self.ctx.output
            ctx = running.context(self.ctx, str(self.paths.input))
            timeout = self.spec.command_timeout_s * 0.9
            events = self.progress.events_path if self.progress is not None else None
            return run_app(self.spark.sparkContext, self.paths, running, self.source_run, ctx, events, timeout)
        watcher = CheckpointWatcher(self.ctx.faults, self.paths.checkpoint, self.paths.output)
        if watcher.needed():
            watcher.start()
        try:
            return self._run_query()
        finally:
            watcher.stop()

    def running(self) -> Scenario:
        """The version whose code a query runs now: the deployed one after an upgrade run's deploy."""
        deployed = read_deployed(self.paths.deployed)
        return self.scenario if deployed is None else get_scenario(deployed.scenario)

    def _run_query(self) -> dict[str, Any]:
        sc = self.running()
        apply_run_confs(self.spark, {**sc.confs, **self.spec.state_confs()})
        # A deployed version may read with another admission limit (a rate limit changed by the upgrade).
        limit = self.spec.effective_batch_rows(sc.max_rows_per_batch)
        trigger = run_trigger(self.spec, sc)
        # An epoch run's input arrives while it runs (over about two epochs), as a live stream's does.
        spread = min(SPREAD_MAX_S, 2 * trigger.interval_ms / 1000) if trigger.epochs else 0.0
        run = dataclasses.replace(self.source_run, max_rows_per_batch=limit, spread_s=spread)
        os.environ[RUN_OUTPUT_ENV] = self.ctx.output  # for a transform that keeps something of its own there
        with self._pipeline_code(BEFORE_QUERY):
            stream = sc.source.stream(self.spark, run)
            # A foreachBatch function or foreach writer the user did not wrap gets the sink's crash points.
            with instrumented_writers(self.ctx.faults):
                writer = sc.attach_sink(sc.transform(stream).writeStream, self.ctx)
        writer = writer.trigger(**trigger.writer_options())  # type: ignore[call-overload]
        try:
            query = (
                writer.option("checkpointLocation", str(self.paths.checkpoint))
                .queryName(f"harness_{self.scenario.name}")
                .start()
            )
            if trigger.epochs:  # no batches to hook: watch the checkpoint's epochs (harness.engine.epochs)
                reached = sc.source.caught_up  # type: ignore[attr-defined]
                try:
                    return run_epochs(
                        query,
                        self.paths.checkpoint,
                        self.paths.root,
                        lambda offset: bool(reached(offset, self.source_run)),
                        self.spec.command_timeout_s * 0.9,
                    )
                except EpochQueryDied as exc:  # a timeout or a source's read error is the harness's, not the query's
                    query.stop()
                    raise QueryFailed(str(exc).split("\n=== Streaming Query ===")[0]) from exc
            if trigger.clocked:  # runs until stopped: stop it, gracefully, once caught up
                query.processAllAvailable()
                query.stop()
            else:
                query.awaitTermination()
        except PySparkException as exc:
            # Spark refused to start or continue the query (e.g. a damaged checkpoint); classic
            # (CapturedException) or Spark Connect (SparkConnectGrpcException) alike.
            raise QueryFailed(str(exc).split("\n=== Streaming Query ===")[0]) from exc
        error = query.exception()
        if error is not None:
            raise QueryFailed(str(error))
        answer = caught_up(query, self.progress)
        unread = getattr(sc.source, "unread", None)
        if unread is not None:  # before any verdict can blame the pipeline for rows it never got
            check_round_read(self.paths.checkpoint, lambda sources: str(unread(sources, self.source_run)))
        return answer

    @contextlib.contextmanager
    def _pipeline_code(self, when: str) -> Iterator[None]:
        """Runs the pipeline's own code: an exception with a frame of it (and no injected fault) becomes
        :class:`PipelineRaised` saying ``when`` (:func:`harness.verdict.raised.pipeline_message`)."""
        try:
            yield
        except Exception as exc:
            roots = ref_roots(self.spec.scenario, self.spec.upgrade_to or "")
            message = None if isinstance(exc, QueryFailed) else pipeline_message(exc, when, roots)
            if message is None:
                raise
            raise PipelineRaised(message) from exc

    def check(self) -> dict[str, Any]:
        with self._pipeline_code(READING_BACK):  # the oracle runs the pipeline's transform, then its read_output
            return self._check()

    def _check(self) -> dict[str, Any]:
        import pyarrow.parquet as pq

        commits = batch_ids(self.paths.checkpoint / "commits")
        watermark = read_commit(self.paths.checkpoint, commits[-1]).next_watermark_ms if commits else 0
        ctx = OracleContext(self.spark, watermark, str(self.paths.checkpoint))
        batch_input = self.scenario.source.batch(self.spark, self.source_run)
        deployed = read_deployed(self.paths.deployed)
        if deployed is None:
            expected = self.scenario.expected(batch_input, ctx)
        else:  # each version's oracle over the batches it committed
            before = committed_before(self.paths.deploy_logs, deployed.first_batch)  # purge-proof: the snapshot
            left = self.paths.deploy_logs
            mark = read_commit(left, deployed.first_batch - 1).next_watermark_ms if deployed.first_batch else 0
            ctxs = (OracleContext(self.spark, mark, str(left)), ctx)
            expected, v1_rows = upgrade_expected(self.scenario, self.running(), batch_input, ctxs, before)
            pq.write_table(v1_rows.toArrow(), self.paths.oracle / V1_EXPECTED)
        # A fresh session: what a new reader sees, not a table snapshot the writer's catalog cached.
        observed = self.running().read_output(reader_session(self.spark), self.ctx, expected.schema)
        counts = {}
        for name, df in (("expected", expected), ("observed", observed)):
            table = df.toArrow()
            pq.write_table(table, self.paths.oracle / f"{name}.parquet")
            counts[f"{name}_rows"] = table.num_rows
        self._write_final_state(batch_input, ctx)
        if self.running().sink_versions is not None:  # which table version holds each row and each batch
            hook = self.running().sink_versions
            assert hook is not None
            where = hook(self.spark, self.ctx, tuple(self.scenario.identity))
            write_versions(self.paths.oracle, where.label, where.rows, where.batches)
        located = self.scenario.source.input_batches(self.source_run, self.scenario.identity)
        if located is not None:  # a source without provenance columns: which batch read which row
            pq.write_table(located, self.paths.oracle / INPUT_BATCHES)
        if isinstance(self.scenario, DStreamScenario):  # batch times and files, to name anomalies by
            write_batches(self.paths.root, self.paths.oracle)
        return {"event": "checked", **counts}

    def _write_final_state(self, batch_input: Any, ctx: OracleContext) -> None:
        """The scenario's expected final state and Spark's (:mod:`harness.verdict.state_check`'s files)."""
        import shutil

        import pyarrow.parquet as pq

        if not self.running().final_state:
            return
        shutil.rmtree(self.paths.oracle / STATE_DIR, ignore_errors=True)  # nothing of an earlier attempt
        (self.paths.oracle / STATE_DIR).mkdir()
        for want in self.running().final_state:
            where = (self.paths.oracle, want.operator_id, want.name)
            try:
                observed = read_state_rows(self.spark, self.paths.checkpoint, want.operator_id, want.name)
            except StateUnreadable as exc:
                state_file(*where, UNREADABLE if exc.known else ERROR).write_text(f"{exc}\n")
                continue
            pq.write_table(want.expected(batch_input, ctx).toArrow(), state_file(*where, EXPECTED))
            pq.write_table(observed.toArrow(), state_file(*where, OBSERVED))


def _parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m harness.engine.driver")
    p.add_argument("--master", default=DEFAULT_MASTER)
    p.add_argument("--confs", default="{}", help="JSON object of Spark confs")
    p.add_argument("--incarnation", type=int, default=1)
    p.add_argument("--open", default=None, metavar="RUN_DIR", help="open this run directory at start")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    os.environ[DRIVER_PGID_ENV] = str(os.getpgid(0))
    progress = ProgressLog()
    driver: RunHandler | None = None
    if attached() and os.environ.get(ATTACH_WAIT_ENV) == "1":  # a spare: its modules are imported; wait
        line = sys.stdin.readline()
        if not line or json.loads(line).get("cmd") != "attach":
            return 0
    try:
        spark = build_session("exactly-once-harness", args.master, json.loads(args.confs))
        progress.install(spark)
        if args.open:
            driver = open_run(RunPaths(Path(args.open)), args.incarnation, spark, progress)
    except Exception as exc:  # reported to the runner, which names the log file
        _send(
            proto, {"event": "error", "message": f"driver start-up failed: {exc}", "traceback": traceback.format_exc()}
        )
        return 2
    _send(proto, {"event": "ready", "pid": os.getpid(), "pgid": os.getpgid(0)})
    for line in sys.stdin:
        message = json.loads(line)
        cmd = message.get("cmd")
        if cmd == "exit":
            break
        try:
            if cmd == "open":
                driver = open_run(RunPaths(Path(message["run_dir"])), args.incarnation, spark, progress)
                reply: dict[str, Any] = {"event": "opened", "run_dir": message["run_dir"]}
            elif cmd == "warm":
                reply = warm(spark)
            elif cmd in ("run", "check") and driver is not None:
                reply = driver.run() if cmd == "run" else driver.check()
            else:
                reply = {"event": "error", "message": f"unknown command {cmd!r} (or no run directory open)"}
        except Exception as exc:
            query_failed = isinstance(exc, QueryFailed | StreamingQueryException | AppFailed)
            reply = {"event": "error", "message": str(exc), "query_failed": query_failed}
            if isinstance(exc, SetupRefused):  # bad input: the runner reports it in one line
                reply["refused"] = True
            reply["traceback"] = traceback.format_exc()
        _send(proto, reply)
    if not attached():  # a hosted JVM's SparkContext outlives its drivers: the pool stops it
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
