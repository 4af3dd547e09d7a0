"""What a scenario is: a pipeline under test, its sink, and how to read it back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.crash import FaultSite
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

    output: str
    checkpoint: str
    faults: FaultSite
    resources: Mapping[str, str] = field(default_factory=dict)


#: A scenario's external resource for one run: entered by the runner before the
#: first driver starts and exited after the last one stopped; yields string
#: settings that reach the sink as ``SinkContext.resources``. Raise
#: ``ResourceUnavailable`` (with a reason saying what to install) if it cannot
#: be provided here.
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


class ResourceUnavailable(RuntimeError):
    """A scenario's external resource (e.g. a PostgreSQL server) cannot be provided here."""


@dataclass(frozen=True)
class OracleContext:
    """What an oracle may know about the finished run besides its input.

    ``watermark_ms`` is the event-time watermark after the last committed
    batch (``nextBatchWatermarkMs`` of the newest ``commits/N``; 0 without
    one): in append mode a stateful query has emitted exactly the groups the
    watermark has closed, so an oracle filters the batch result by it.
    ``before_deploy``: see the field."""

    spark: SparkSession
    watermark_ms: int
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

    name: str
    expected: OracleFn
    operator_id: int = 0


@dataclass(frozen=True)
class Scenario:
    """A pipeline under test.

    ``transform`` is applied both to the stream and (for the oracle) to a batch
    read of the same input, so it must only use operations valid in both.
    ``attach_sink`` configures the sink on a ``DataStreamWriter`` (the runner
    sets checkpoint and trigger). ``read_output`` returns what the sink has
    made visible to its readers. ``guarantee`` is what the scenario is
    *expected* to show; the checker decides what it actually shows.
    """

    name: str
    summary: str
    guarantee: str
    kill_points: tuple[str, ...]
    transform: Callable[[DataFrame], DataFrame]
    attach_sink: Callable[[DataStreamWriter, SinkContext], DataStreamWriter]
    read_output: Callable[[SparkSession, SinkContext, StructType], DataFrame]
    partitions: int = 2
    rows_per_offset: int = 1
    max_rows_per_batch: int = 40
    rows_per_round: tuple[int, int] = (20, 60)
    identity: tuple[str, ...] = PROVENANCE
    resource: ResourceHook | None = None
    #: Expected output; ``None`` means ``transform`` of the batch input (stateless pipelines).
    oracle: OracleFn | None = None
    #: Extra replayable-source settings (``SourceConfig`` fields: disorder, lateness, skew, ...).
    source_overrides: Mapping[str, Any] = field(default_factory=dict)
    #: Runtime SQL confs set on the session before the query starts (e.g. shuffle partitions).
    confs: Mapping[str, str] = field(default_factory=dict)
    #: Whether the replayable source fires ``sink.write.start|mid|end`` in its read();
    #: ``False`` when the sink is wrapped by the ``crash_injecting`` format, which fires them itself
    #: (inside the sink's write(), where a sink that publishes early is caught).
    source_write_points: bool = True
    #: The sink runs Python code inside a ``crash_injecting`` wrapper (a ``foreachBatch`` function or a
    #: ``DataSourceStreamWriter``): chaos campaigns take a census of each drawn example's data and draw
    #: ``sink.step`` faults inside that code, as well as faults at the named points.
    sink_steps: bool = False
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
    #: Jar sets of ``jars/pom.xml`` the pipeline needs (``"delta-spark"``): checked before a run starts anything
    #: (:func:`harness.spark.jars.require`), one line and exit 2 when missing or built for another Spark.
    jars: tuple[str, ...] = ()
    #: For a versioned table sink (Delta): reads, after the run, which table version holds each row and each
    #: batch, so that every anomaly names them (:class:`SinkVersions`).
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
        if not self.source.provenance and set(self.identity) <= set(PROVENANCE):
            raise ValueError(
                f"scenario {self.name}: {self.source.describe()} adds no provenance columns {list(PROVENANCE)}; "
                "give identity= the output columns that name a row (or a group)"
            )
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
    def run_resource(self) -> ResourceHook | None:
        """The scenario's own ``resource`` hook, else its source's (a Kafka topic needs a broker)."""
        hook: ResourceHook | None = self.resource or getattr(self.source, "resource", None)
        return hook

    @property
    def kill_only_points(self) -> frozenset[str]:
        """Kill points that only the checkpoint watcher reaches with this source (it can SIGKILL, not raise)."""
        watched = {"after_offsets_logged", "after_commit_logged"}
        return frozenset(watched & set(self.kill_points) - self.source.fires(self.source_write_points))

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
        return self.oracle(batch_input, ctx) if self.oracle else self.transform(batch_input)


def parquet_file_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    """The parquet file sink (append mode) into ``ctx.output``: Spark's exactly-once reference sink."""
    return writer.outputMode("append").format("parquet").option("path", ctx.output)


def read_parquet_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    """Rows of the parquet files in ``ctx.output`` (through ``_spark_metadata`` when the file sink wrote them)."""
    return spark.read.schema(schema).parquet(ctx.output)
