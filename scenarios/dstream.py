"""DStream applications as scenarios: ``pyspark.streaming`` pipelines recovered with ``getOrCreate``.

A :class:`DStreamScenario` is a :class:`~scenarios.base.Scenario` whose pipeline is a **setup function**, the one a
DStream application hands to ``StreamingContext.getOrCreate(checkpointDir, setup)``: called as
``setup(sc, ctx)`` with the pooled ``SparkContext`` and a :class:`DStreamContext`, it creates the
``StreamingContext`` with ``ctx.batch_seconds``, sets ``ssc.checkpoint(ctx.checkpoint)``, reads
``ssc.textFileStream(ctx.input_dir)`` (JSON lines, one row each, provenance columns first) and registers its output
operations. The harness calls it only for a fresh checkpoint; later drivers recover the whole graph from the
checkpoint, as ``getOrCreate`` does. ``transform`` is the same pipeline in batch, over the same rows (a DataFrame of
:data:`scenarios.rowgen.SCHEMA_DDL`): the oracle. ``read_output`` reads what the output operations made visible.

Functions of the graph are restored from the checkpoint by cloudpickle: keep the module importable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.base import OracleFn, Scenario, SinkContext
from scenarios.filedir import parse_name, publish, stage
from scenarios.rowgen import SCHEMA_DDL

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark import SparkContext
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType
    from pyspark.streaming import StreamingContext

    from scenarios.sources import SourceRun

#: The crash points a DStream scenario reaches (:mod:`fault_injectors.dstream`).
DSTREAM_KILL_POINTS = ("dstream.batch.start", "dstream.batch.end")


@dataclass(frozen=True)
class DStreamContext:
    """What a DStream setup function needs: where to read, checkpoint and write, and the batch interval."""

    #: The directory to read with ``ssc.textFileStream``: JSON lines, one row each, provenance
    #: columns first.
    input_dir: str
    #: The checkpoint directory: pass it to ``ssc.checkpoint``.
    checkpoint: str
    #: The run's output directory: your output operations write here (or under it).
    output: str
    #: The batch interval to create the ``StreamingContext`` with, in whole seconds.
    batch_seconds: int
    #: What the scenario's ``resource`` hook provided for the run (as ``SinkContext.resources``).
    resources: Mapping[str, str] = field(default_factory=dict)


#: ``setup(sc, ctx) -> StreamingContext``: the function a DStream application gives ``getOrCreate``,
#: called with the driver's ``SparkContext`` and a :class:`DStreamContext` for a fresh checkpoint
#: only: create the context with ``ctx.batch_seconds``, call ``ssc.checkpoint(ctx.checkpoint)``,
#: read ``ctx.input_dir`` and register the outputs.
SetupFn = Callable[["SparkContext", DStreamContext], "StreamingContext"]


@dataclass(frozen=True)
class DStreamFiles:
    """The directory a DStream application reads with ``textFileStream``: JSON lines the harness publishes in
    the driver, every round's files in one batch (:mod:`fault_injectors.dstream`)."""

    limits_batches: bool = field(default=False, init=False)
    provenance: bool = field(default=True, init=False)

    def fires(self, write_points: bool) -> frozenset[str]:
        return frozenset(DSTREAM_KILL_POINTS)

    def feed(self, input_dir: str | Path, rows: Mapping[int, int], rows_per_offset: int) -> dict[str, Any]:
        """Nothing here: the driver publishes the files once its context runs (a fresh ``textFileStream``
        ignores files older than its start)."""
        return {}

    def input_batches(self, run: SourceRun, identity: Sequence[str]) -> pa.Table | None:
        """``None``: rows carry their provenance."""
        return None

    def place(self, run: SourceRun, names: Sequence[str], mtime_ms: int | Callable[[], int]) -> None:
        """Write the files ``names`` (``p<partition>-<start>-<end>.json``) into the directory: all of them hidden
        first, then each given modification time ``mtime_ms`` (or what ``mtime_ms()`` returns once they are
        staged) and renamed into place (a file stream selects files by that time: one batch reads them all)."""
        import os

        from pyspark.sql.types import StructType, _parse_datatype_string

        schema = _parse_datatype_string(SCHEMA_DDL)
        assert isinstance(schema, StructType)
        staged = []
        for name in names:
            parsed = parse_name(name)
            assert parsed is not None, name
            staged.append((stage(run.input_dir, *parsed, "json", run.config, None, schema), name))
        when = mtime_ms() if callable(mtime_ms) else mtime_ms
        for tmp, name in staged:
            os.utime(tmp, ns=(when * 1_000_000, when * 1_000_000))
            os.replace(tmp, Path(run.input_dir) / name)

    def stream(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        raise ValueError("a DStream scenario reads its directory with textFileStream in its setup function")

    def batch(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        """Every published row (the oracle's input); files the driver has not published yet are written now."""
        from pyspark.sql.types import StructType, _parse_datatype_string

        schema = _parse_datatype_string(SCHEMA_DDL)
        assert isinstance(schema, StructType)
        publish(run.input_dir, run.tap, "json", run.config, None, schema)
        return spark.read.schema(SCHEMA_DDL).json(run.input_dir)

    def describe(self) -> str:
        return "a directory of JSON-lines files read by a DStream textFileStream"


@dataclass(frozen=True)
class DStreamScenario(Scenario):
    """A DStream application under test (see the module). Build one with :func:`dstream_scenario`."""

    #: ``setup(sc, ctx) -> StreamingContext``: builds the application (:data:`SetupFn`); required.
    setup: SetupFn | None = None
    #: The batch interval, whole seconds (batch times are multiples of it).
    batch_seconds: int = 1

    def __post_init__(self) -> None:
        if self.setup is None:
            raise ValueError(f"scenario {self.name}: a DStream scenario needs its setup function (setup=)")
        if not isinstance(self.batch_seconds, int) or self.batch_seconds < 1:
            raise ValueError(f"scenario {self.name}: batch_seconds must be a whole number of seconds >= 1")
        if not isinstance(self.source, DStreamFiles):
            raise ValueError(f"scenario {self.name}: a DStream scenario reads DStreamFiles")
        foreign = [p for p in self.kill_points if p not in DSTREAM_KILL_POINTS]
        if foreign:
            raise ValueError(
                f"scenario {self.name}: kill point(s) {foreign} are not a DStream application's; choose among "
                f"{list(DSTREAM_KILL_POINTS)} (and sink.step faults inside foreachRDD functions)"
            )
        super().__post_init__()

    def context(self, sink: SinkContext, input_dir: str) -> DStreamContext:
        return DStreamContext(input_dir, sink.checkpoint, sink.output, self.batch_seconds, sink.resources)


def _no_writer(writer: Any, ctx: SinkContext) -> Any:
    raise TypeError("a DStream scenario has no DataStreamWriter: its setup function registers the output")


def dstream_scenario(
    *,
    name: str,
    summary: str,
    guarantee: str,
    setup: SetupFn,
    transform: Callable[[DataFrame], DataFrame],
    read_output: Callable[[SparkSession, SinkContext, StructType], DataFrame],
    kill_points: tuple[str, ...] = DSTREAM_KILL_POINTS,
    oracle: OracleFn | None = None,
    identity: tuple[str, ...] = ("partition", "offset", "seq"),
    sink_steps: bool = True,
    batch_seconds: int = 1,
    partitions: int = 2,
    rows_per_round: tuple[int, int] = (20, 60),
    source_config: Mapping[str, Any] | None = None,
) -> DStreamScenario:
    """A :class:`DStreamScenario`; the other arguments are the ``Scenario`` fields of the same name.
    ``sink_steps``: chaos campaigns draw ``sink.step`` faults inside the ``foreachRDD`` functions.
    ``source_config``: replayable-source settings (``Scenario.source_overrides``). A DStream's state
    lives in its checkpointed RDDs, not in a state store: no state store axes are drawn for it."""
    return DStreamScenario(
        name,
        summary,
        guarantee,
        kill_points,
        transform,
        _no_writer,
        read_output,
        partitions=partitions,
        rows_per_round=rows_per_round,
        identity=identity,
        oracle=oracle,
        source_overrides=dict(source_config or {}),
        sink_steps=sink_steps,
        source=DStreamFiles(),
        triggers=(),
        trigger_note="a DStream application runs on its own batch interval (batch_seconds), not a trigger",
        setup=setup,
        batch_seconds=batch_seconds,
    )


def read_json_output(spark: SparkSession, ctx: SinkContext, schema: StructType, pattern: str = "*") -> DataFrame:
    """The JSON-lines files under ``ctx.output`` matching ``pattern`` (hidden files are skipped), as rows of
    ``schema``; no rows when there are none yet."""
    files = sorted(str(p) for p in Path(ctx.output).glob(pattern) if not p.name.startswith((".", "_")))
    if not files:
        return spark.createDataFrame([], schema)
    return spark.read.schema(schema).json(files)
