"""What a scenario is: a pipeline under test, its sink, and how to read it back."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.crash import FaultSite
from harness.errors import SetupError
from scenarios.rowgen import PROVENANCE, SourceConfig
from scenarios.sources import TASK_WRITE_POINTS, Replayable, SourceSpec

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType


#: Trigger kinds (``harness.engine.trigger.KINDS``) a micro-batch pipeline over a replayable, file, Kafka or Delta
#: source runs under besides the default rounds: scheduled jobs and the processing-time clock.
MICRO_BATCH_TRIGGERS = ("available-now", "once", "processing-time")


@dataclass(frozen=True)
class SinkContext:
    """Where a scenario's sink writes and how it reaches the run's crash points.

    ``resources`` holds what the scenario's ``resource`` hook provided for this
    run (e.g. ``{"dsn": ...}`` of a throw-away database), the same in every
    driver incarnation."""

    #: The run's output directory, fresh per run and the same in every driver of it: write your
    #: sink's data here (or in any directory under it).
    output: str
    #: The query's checkpoint directory (the runner sets it on the writer; read it, never write it).
    checkpoint: str
    #: The run's armed crash points. A ``foreachBatch`` function or ``foreach`` writer your
    #: ``attach_sink`` registers is wrapped with them by the harness; a Python ``DataSource`` sink
    #: gets them through the ``crash_injecting`` format (:mod:`fault_injectors.sinks`).
    faults: FaultSite
    #: What the scenario's ``resource`` hook (or its source's) provided for the run, e.g. ``{"dsn":
    #: ...}``.
    resources: Mapping[str, str] = field(default_factory=dict)


#: ``resource(run_dir) -> AbstractContextManager[dict[str, str]]``: a scenario's external resource
#: for one run, given a directory of its own in the run's: entered by the runner before the first
#: driver starts and exited after the last one stopped; yields string settings that reach the sink
#: as ``SinkContext.resources``. Raise ``ResourceUnavailable`` (with a reason saying what to
#: install) if it cannot be provided here.
ResourceHook = Callable[[Path], AbstractContextManager[dict[str, str]]]


#: Set by the harness in the driver process before a scenario's ``transform`` runs: the run's output directory
#: (``SinkContext.output``), for code that must place something of its own there.
RUN_OUTPUT_ENV = "HARNESS_RUN_OUTPUT"


def run_output() -> str:
    """The running query's output directory (:data:`RUN_OUTPUT_ENV`); ``RuntimeError`` outside a harness driver."""
    import os

    value = os.environ.get(RUN_OUTPUT_ENV)
    if not value:
        raise RuntimeError(f"{RUN_OUTPUT_ENV} is not set: call this from a scenario's transform in a harness driver")
    return value


class ResourceUnavailable(SetupError, RuntimeError):
    """A scenario's external resource (e.g. a PostgreSQL server) cannot be provided here."""


@dataclass(frozen=True)
class OracleContext:
    """What an oracle may know about the finished run besides its input.

    ``watermark_ms`` is the event-time watermark after the last committed
    batch (``nextBatchWatermarkMs`` of the newest ``commits/N``; 0 without
    one): in append mode a stateful query has emitted exactly the groups the
    watermark has closed, so an oracle filters the batch result by it.
    ``before_deploy``: see the field."""

    #: The driver's session, to build the expected rows with.
    spark: SparkSession
    #: The event-time watermark after the last committed batch, in ms since the epoch (0 without
    #: one).
    watermark_ms: int
    #: The query's checkpoint directory (read only).
    checkpoint: str
    #: In an upgrade run, for the deployed version's oracle: per source partition, the end offset of the batches
    #: the previous version committed (rows below it ran before the deploy); ``None`` otherwise.
    before_deploy: Mapping[int, int] | None = None


#: Expected output from a *batch* DataFrame of exactly the input that was added.
OracleFn = Callable[["DataFrame", OracleContext], "DataFrame"]


@dataclass(frozen=True)
class SinkVersions:
    """Where a versioned table sink (Delta) keeps each row and each batch, for naming them in anomalies.

    ``rows``: the identity columns of every row of the table's current version plus :data:`VERSION_COLUMN`, the
    table version whose commit added the row's file. ``batches``: batch id -> the table versions whose commit
    carried that batch's transaction id (two for a batch written twice, none for one never written).
    ``label`` names the table kind in reports (``Delta``)."""

    label: str
    rows: pa.Table
    batches: Mapping[int, tuple[int, ...]]


#: Column of :attr:`SinkVersions.rows` holding the version that added the row.
VERSION_COLUMN = "__sink_version"

#: Reads a finished run's :class:`SinkVersions` (``spark``, the sink's context, the scenario's identity columns).
SinkVersionsHook = Callable[["SparkSession", SinkContext, tuple[str, ...]], SinkVersions]


@dataclass(frozen=True)
class StateExpectation:
    """One state variable the query must hold after the run's last committed batch.

    Spark's ``statestore`` reader reads it (``operator_id``; ``name`` is a ``transformWithState`` variable, the
    reader's ``stateVarName``, or ``""`` for the operator's default store) as rows whose struct columns are
    flattened and ``partition_id`` dropped; ``expected`` computes the same rows from the batch input. The two are
    compared as multisets of whole rows: state that is wrong but not yet emitted fails the run."""

    #: The state variable: a ``transformWithState`` variable's name, or ``""`` for the operator's
    #: default store.
    name: str
    #: ``expected(batch_df, ctx) -> DataFrame``: the rows the state must hold, from the batch input
    #: (as ``oracle``).
    expected: OracleFn
    #: The stateful operator, as Spark's ``statestore`` reader numbers it (0 for the query's first).
    operator_id: int = 0


@dataclass(frozen=True)
class Scenario:
    """A pipeline under test: its input, transform and sink, how to read the sink back, and what
    it is expected to show (the checker decides what it actually shows)."""

    #: The scenario's name in reports, bundles and ``python -m harness list``.
    name: str
    #: One line: the pipeline and its sink (shown when a run starts).
    summary: str
    #: What the pipeline is expected to show, ``"exactly-once"`` or ``"at-least-once"``; reports
    #: compare it with what the checker finds (the verdict itself never depends on it).
    guarantee: str
    #: The crash points (``python -m harness list``) that seeded kills (``run --kills``) and chaos
    #: campaigns choose from; a point the source cannot reach is refused when the scenario is built.
    kill_points: tuple[str, ...]
    #: ``transform(df) -> DataFrame``: your pipeline. Applied to the stream and, for the oracle, to
    #: a batch read of exactly the input that was added, so it may use only operations valid in
    #: both.
    transform: Callable[[DataFrame], DataFrame]
    #: ``attach_sink(writer, ctx) -> DataStreamWriter``: configure your sink on the query's
    #: ``DataStreamWriter`` (format, options, output mode, ``foreachBatch``), writing under
    #: ``ctx.output`` (a :class:`SinkContext`); the runner sets the checkpoint and the trigger.
    attach_sink: Callable[[DataStreamWriter, SinkContext], DataStreamWriter]
    #: ``read_output(spark, ctx, schema) -> DataFrame``: what your sink has made visible to its
    #: readers after the run. ``schema`` is the oracle's expected schema (the ``StructType`` of
    #: ``oracle``'s, else ``transform``'s, batch result): read your output in it, so the two compare
    #: column by column. ``spark`` is a clone of the writer's session (its confs, temporary views and
    #: registered data sources) with catalogs of its own, so a table a catalog cached while the query
    #: wrote is read as a new reader would.
    read_output: Callable[[SparkSession, SinkContext, StructType], DataFrame]
    #: Source partitions of the input (the replayable, file and Kafka sources).
    partitions: int = 2
    #: Rows per offset unit of a partition (``seq`` numbers them); a Kafka scenario keeps 1.
    rows_per_offset: int = 1
    #: Rows one batch may take (the replayable source's admission control); schedules predict batch
    #: ids with it.
    max_rows_per_batch: int = 40
    #: Offset units each partition gains per round, drawn between the two bounds (inclusive).
    rows_per_round: tuple[int, int] = (20, 60)
    #: Output columns that name a row (the default: its provenance) or a group (an aggregate's
    #: keys): the checker compares the output per identity and names each anomaly by it.
    identity: tuple[str, ...] = PROVENANCE
    #: ``resource(run_dir)``: an external system the run needs (a database), as a context manager
    #: yielding settings (:data:`ResourceHook`); they reach the sink as ``SinkContext.resources``.
    resource: ResourceHook | None = None
    #: ``oracle(batch_df, ctx) -> DataFrame``: the expected output from a batch read of exactly the
    #: input that was added and an :class:`OracleContext`; ``None``: ``transform`` of the batch
    #: input (stateless pipelines).
    oracle: OracleFn | None = None
    #: Extra replayable-source settings (``SourceConfig`` fields: disorder, lateness, skew, ...).
    source_overrides: Mapping[str, Any] = field(default_factory=dict)
    #: Runtime SQL confs set on the session before the query starts (e.g. shuffle partitions).
    confs: Mapping[str, str] = field(default_factory=dict)
    #: Whether the replayable source fires ``sink.write.start|mid|end`` in its read();
    #: ``False`` when the sink is wrapped by the ``crash_injecting`` format, which fires them itself
    #: (inside the sink's write(), where a sink that publishes early is caught).
    source_write_points: bool = True
    #: Kill points among ``kill_points`` that only a watcher of the scenario's own reaches, SIGKILL only (a
    #: sink committing in the JVM: ``sink.commit.after`` through :mod:`scenarios.delta.commit_watch`):
    #: campaigns draw them as kills of the driver, never as a raise.
    watcher_points: tuple[str, ...] = ()
    #: Chaos campaigns take a census of each drawn example's data and draw ``sink.step`` faults inside the
    #: sink's Python code, as well as faults at the named points. ``None`` (the default): when
    #: ``attach_sink`` registers a ``foreachBatch`` function or ``foreach`` writer the harness wraps (one
    #: not wrapped by hand; found by calling it once on a recording writer); ``True`` for code inside a
    #: ``crash_injecting`` wrapper (a hand-wrapped function, a ``DataSourceStreamWriter``).
    sink_steps: bool | None = None
    #: The query keeps state (aggregation, deduplication, join): chaos campaigns draw its state store, checkpoint
    #: format version and shuffle partitions (``RunSpec.state_store`` / ``checkpoint_format`` /
    #: ``shuffle_partitions``) as part of each example.
    stateful: bool = False
    #: State stores (keys of ``harness.engine.spec.STATE_STORES``) the query runs on; empty: every one. A
    #: scenario that limits them sets its default provider in ``confs`` too (``transformWithState`` needs RocksDB).
    state_stores: tuple[str, ...] = ()
    #: State the query must hold after the run (checked through Spark's ``statestore`` reader; a checkpoint the
    #: reader cannot read is reported as not checked, with the reader's error).
    final_state: tuple[StateExpectation, ...] = ()
    #: How the input reaches the query (:mod:`scenarios.sources`): the replayable source (default), the same
    #: with a user's schema and row function, Spark's file source over a directory the harness fills, or a
    #: user's Python ``DataSource`` fed through its context (:class:`harness.sources.PythonSource`).
    source: SourceSpec = field(default_factory=Replayable)
    #: Jar sets the pipeline needs (``"delta-spark"``, ``"kafka-connector"``): checked in the cache for the
    #: installed PySpark before a run starts anything (:func:`harness.spark.jars.problem`); one line naming
    #: the ``harness setup`` command and exit 2 when missing.
    jars: tuple[str, ...] = ()
    #: For a versioned table sink (Delta): reads, after the run, which table version holds each row and each
    #: batch, so that every anomaly names them (:class:`SinkVersions`). The ``DELTA`` preset's finds the
    #: one table under ``ctx.output``; ``scenarios.delta.locate.delta_versions_at(path)`` names another.
    sink_versions: SinkVersionsHook | None = None
    #: The next version of this pipeline (a scenario name or ``module:ATTRIBUTE``): ``run`` and ``chaos`` then
    #: play upgrade runs, deploying it over the same checkpoint and sink (``RunSpec.upgrade_to``).
    upgrade_to: str | None = None
    #: Trigger kinds the pipeline runs under (``run --trigger``, the chaos trigger axis); a kind it cannot run
    #: under is refused before Spark starts, with ``trigger_note`` saying why.
    triggers: tuple[str, ...] = MICRO_BATCH_TRIGGERS
    #: The trigger of a run that names none (``KIND[:INTERVAL]``); ``None``: the default rounds (``availableNow``).
    default_trigger: str | None = None
    #: Why the pipeline runs under ``triggers`` only (the refusal's reason).
    trigger_note: str = "a micro-batch pipeline runs under scheduled jobs and processing-time triggers"

    def __post_init__(self) -> None:
        if self.state_stores and not self.stateful:
            raise ValueError(f"scenario {self.name}: state_stores is set but the scenario is not stateful")
        fired = self.source.fires(self.source_write_points)
        # What the checkpoint watcher reaches for any source, and what a crash-injecting sink wrapper fires.
        reachable = fired | {"after_offsets_logged", "after_commit_logged", "sink.commit.before", "sink.commit.after"}
        if not self.source_write_points:
            reachable |= set(TASK_WRITE_POINTS)
        ident, own = set(self.identity), self._source_identity
        if not self.source.provenance and ident <= set(PROVENANCE) and not (ident and ident <= own):
            own_text = f" (or of its own columns {sorted(own)})" if own else ""
            raise ValueError(
                f"scenario {self.name}: {self.source.describe()} adds no provenance columns {list(PROVENANCE)}; "
                f"give identity= the output columns that name a row{own_text} or a group"
            )
        strays = [p for p in self.watcher_points if p not in self.kill_points]
        if strays:
            raise ValueError(f"scenario {self.name}: watcher_points {strays} are not among its kill_points")
        unreachable = [p for p in self.kill_points if p not in reachable]
        if unreachable:
            raise ValueError(
                f"scenario {self.name}: kill point(s) {unreachable} cannot fire with {self.source.describe()}"
                + (
                    "; sink.write.* need a crash_injecting sink wrapper (source_write_points=False)"
                    if set(unreachable) & set(TASK_WRITE_POINTS)
                    else ""
                )
                + f"; choose among {sorted(reachable)}"
            )

    @property
    def _source_identity(self) -> frozenset[str]:
        """The source's ``identity_columns``: its own columns naming one record (raw Kafka's)."""
        return frozenset(getattr(self.source, "identity_columns", ()))

    def _kept_identity(self, expected: DataFrame) -> DataFrame:
        """``expected``; ``ValueError`` if it lacks an identity column of the source's own."""
        if self.source.provenance or not set(self.identity) & self._source_identity:
            return expected
        missing = [c for c in self.identity if c not in expected.columns]
        if missing:
            raise ValueError(
                f"scenario {self.name}: identity column(s) {missing} are not in the output "
                f"{expected.columns}; keep them in transform's output or give identity= others"
            )
        return expected

    @property
    def run_resource(self) -> ResourceHook | None:
        """The scenario's own ``resource`` hook, else its source's (a Kafka topic needs a broker)."""
        hook: ResourceHook | None = self.resource or getattr(self.source, "resource", None)
        return hook

    @property
    def kill_only_points(self) -> frozenset[str]:
        """Kill points that only a watcher reaches (the checkpoint watcher, for this source; a watcher of the
        scenario's own, :attr:`watcher_points`): it can SIGKILL, not raise."""
        watched = {"after_offsets_logged", "after_commit_logged"}
        checkpoint = watched & set(self.kill_points) - self.source.fires(self.source_write_points)
        return frozenset(checkpoint | set(self.watcher_points))

    @functools.cached_property
    def draws_sink_steps(self) -> bool:
        """:attr:`sink_steps`, with ``None`` decided by calling ``attach_sink`` once on a recording writer in a
        throw-away directory (:func:`fault_injectors.autowrap.registers_unwrapped_sink`)."""
        if self.sink_steps is not None:
            return self.sink_steps
        import collections
        import tempfile

        from fault_injectors.autowrap import registers_unwrapped_sink

        with tempfile.TemporaryDirectory(prefix="harness-probe-") as tmp:
            resources: Mapping[str, str] = collections.defaultdict(str)  # any key a sink reads
            ctx = SinkContext(f"{tmp}/output", f"{tmp}/checkpoint", FaultSite(None), resources)
            return registers_unwrapped_sink(self.attach_sink, ctx)

    @property
    def max_offsets_per_batch(self) -> int:
        return max(1, self.max_rows_per_batch // self.rows_per_offset)

    @property
    def batch_limit(self) -> int | None:
        """Offset units one batch may take, as the schedule predicts batches; ``None`` when the source
        takes everything available in one batch (the file source without ``maxFilesPerTrigger``)."""
        return self.batch_limit_for(self.max_rows_per_batch)

    def batch_limit_for(self, batch_rows: int) -> int | None:
        """:attr:`batch_limit` when a run lets a batch take ``batch_rows`` rows (``RunSpec.batch_rows``)."""
        return max(1, batch_rows // self.rows_per_offset) if self.source.limits_batches else None

    def source_config(self, seed: int) -> SourceConfig:
        return SourceConfig(
            seed=seed, partitions=self.partitions, rows_per_offset=self.rows_per_offset, **dict(self.source_overrides)
        )

    def expected(self, batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
        """The oracle's expected output for ``batch_input``."""
        out = self.oracle(batch_input, ctx) if self.oracle else self.transform(batch_input)
        return self._kept_identity(out)


def parquet_file_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """The parquet file sink (append mode) into ``ctx.output``: Spark's exactly-once reference sink."""
    return writer.outputMode("append").format("parquet").option("path", ctx.output)


def read_parquet_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Rows of the parquet files in ``ctx.output`` (through ``_spark_metadata`` when the file sink wrote them)."""
    return spark.read.schema(schema).parquet(ctx.output)
