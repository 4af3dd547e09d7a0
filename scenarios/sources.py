"""A scenario's input (``Scenario.source``): how the harness makes data available to the query,
how the oracle reads back exactly that input, and which crash points the source itself fires.

Every kind is driven by the same tap (:mod:`scenarios.tap`): the runner raises the available
offsets per partition between runs, and rows are pure functions of ``(seed, partition, offset,
seq)``, so the oracle's input is exact and a replay sees the same data.

- :class:`Replayable` (the default): the harness's own Python source, with its 6 columns or with
  :class:`~scenarios.userrows.Rows` (a user's DDL schema and row function). It fires the
  source-side crash points exactly and limits batches to ``max_rows_per_batch``.
- :class:`harness.sources.PythonSource`: a user's Python ``DataSource`` fed through its context
  factory; the oracle reads the source's own rows up to the newest committed offsets.
- :class:`FileDirectory`: Spark's own file source (JSON, CSV, parquet) over a directory the
  harness fills with one file per partition and round (:mod:`scenarios.filedir`). No Python code
  runs in the source's hot path; ``offsets/N`` and ``commits/N`` kills come from the checkpoint
  watcher, and each run of the query is one batch (no ``maxFilesPerTrigger``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from scenarios.filedir import FORMATS, publish
from scenarios.readlimits import ADMISSION_CONTROL
from scenarios.rowgen import SCHEMA_DDL, ConfigError, SourceConfig
from scenarios.userrows import Rows

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

#: Crash points only a source's own code can reach (no checkpoint file marks them).
SOURCE_POINTS = ("source.latest_offset", "source.read")
#: Crash points inside a write task: fired by the replayable source's read() (same task) or by a
#: ``crash_injecting`` sink wrapper.
TASK_WRITE_POINTS = ("sink.write.start", "sink.write.mid", "sink.write.end")
#: File-source reader options the harness decides (lower case).
_HARNESS_OWNED = {"maxfilespertrigger", "maxbytespertrigger", "latestfirst", "cleansource", "header"}
_NESTED = ("STRUCT<", "ARRAY<", "MAP<")


@dataclass(frozen=True)
class SourceRun:
    """One run's wiring of the source, as the child driver knows it."""

    config: SourceConfig
    tap: str
    input_dir: str
    checkpoint: str
    fault_dir: str
    max_rows_per_batch: int | None
    #: Whether the replayable source fires the ``sink.write.*`` points in its read().
    write_points: bool
    #: What the scenario's ``resource`` hook provided for the run (e.g. a Kafka broker's ``bootstrap``).
    resources: Mapping[str, str] = field(default_factory=dict)
    #: Seconds over which a source that publishes its input (a Kafka topic) spreads a round's records while the
    #: query runs, instead of publishing them before it starts: an epoch run's kills then land among rows in flight.
    spread_s: float = 0.0


@dataclass(frozen=True)
class SourceDamage:
    """What a source nemesis did to the input between two runs of the query (a source's ``apply_nemesis``).

    ``lost``: records deleted before the query read them, ``(partition, start, end)`` in the source's offsets,
    named by ``where`` (e.g. ``topic harness-1a2b``). ``setting`` is the query's setting that decides what it
    does with them (e.g. ``failOnDataLoss=false``); ``allowed``: under it the query may skip them (a loss the
    verdict reports as allowed, not a violation), else it must fail loudly rather than skip them. ``benign``:
    the change is one the source's contract says a query takes in its stride (a topic growing partitions, a
    nemesis that found nothing to delete), so Spark failing the query after it is the subject's failure, not a
    refusal of damage."""

    description: str
    lost: tuple[tuple[int, int, int], ...] = ()
    where: str = ""
    setting: str = ""
    allowed: bool = False
    benign: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "lost": [list(x) for x in self.lost],
            "where": self.where,
            "setting": self.setting,
            "allowed": self.allowed,
            "benign": self.benign,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> SourceDamage:
        lost = tuple((int(p), int(s), int(e)) for p, s, e in raw.get("lost", ()))
        return cls(
            str(raw.get("description", "")), lost, str(raw.get("where", "")), str(raw.get("setting", "")),
            bool(raw.get("allowed", False)), bool(raw.get("benign", False)),
        )  # fmt: skip

    def lost_text(self) -> str:
        """``topic T partition 0 offsets [20, 25)``, one clause per lost range (``""`` for none)."""
        return "; ".join(f"{self.where} partition {p} offsets [{s}, {e})".strip() for p, s, e in self.lost)


def source_nemeses(source: object) -> Mapping[str, str]:
    """The faults ``source`` can apply to its input between two runs of the query (name -> what it does):
    its ``nemeses()``, as :class:`~scenarios.kafka.KafkaTopic` offers ``age_out_records`` and
    ``add_partitions``; empty for a source without any."""
    offered = getattr(source, "nemeses", None)
    return dict(offered()) if callable(offered) else {}


class SourceSpec(Protocol):
    """How a scenario's input reaches the query. ``stream`` and ``batch`` see the same rows: the
    batch read is the oracle's input, exactly what the tap made available."""

    # Read-only members: the sources are frozen dataclasses.
    @property
    def limits_batches(self) -> bool:
        """Whether a batch is limited to ``max_rows_per_batch`` (schedules predict batch ids with it)."""
        ...

    @property
    def provenance(self) -> bool:
        """Whether every row carries the provenance columns ``partition, offset, seq``."""
        ...

    def fires(self, write_points: bool) -> frozenset[str]:
        """The crash points this source fires itself."""
        ...

    def feed(self, input_dir: str | Path, rows: Mapping[int, int], rows_per_offset: int) -> dict[str, Any]:
        """Called by the runner after the tap gained ``rows`` offset units per partition: make them available
        where the tap alone does not (returns what to record in the history)."""
        ...

    def input_batches(self, run: SourceRun, identity: Sequence[str]) -> pa.Table | None:
        """For sources without provenance columns: the ``identity`` columns of the rows each batch read, with
        a batch id column, so the verdict can name an anomaly's batch; ``None`` when provenance does it."""
        ...

    def stream(self, spark: SparkSession, run: SourceRun) -> DataFrame: ...

    def batch(self, spark: SparkSession, run: SourceRun) -> DataFrame: ...

    def describe(self) -> str: ...


def _rows_options(rows: Rows | None) -> dict[str, str]:
    return {} if rows is None else {"row_schema": rows.schema, "row_fn": rows.fn}


@dataclass(frozen=True)
class Replayable:
    """The replayable Python source; ``rows`` gives it a user's columns after the provenance columns; ``name``
    names it to Spark (``DataStreamReader.name``, 4.2+: a named source keeps its offsets across queries whose
    sources are added or removed, with ``spark.sql.streaming.queryEvolution.enableSourceEvolution``)."""

    rows: Rows | None = None
    name: str | None = None
    #: A batch takes at most ``max_rows_per_batch`` rows where PySpark passes Python sources a read limit (4.2
    #: and later); before, a round's rows come in one batch.
    limits_batches: bool = field(default=ADMISSION_CONTROL, init=False)
    provenance: bool = field(default=True, init=False)

    def fires(self, write_points: bool) -> frozenset[str]:
        points = {*SOURCE_POINTS, "after_offsets_logged", "after_commit_logged"}
        return frozenset(points | set(TASK_WRITE_POINTS) if write_points else points)

    def feed(self, input_dir: str | Path, rows: Mapping[int, int], rows_per_offset: int) -> dict[str, Any]:
        """Nothing to do: the source reads the tap."""
        return {}

    def input_batches(self, run: SourceRun, identity: Sequence[str]) -> pa.Table | None:
        """``None``: rows carry their provenance."""
        return None

    def stream(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        from scenarios.replayable_source import FORMAT

        opts = {
            **run.config.to_options(),
            **_rows_options(self.rows),
            "tap": run.tap,
            "max_rows_per_batch": str(run.max_rows_per_batch),
            "checkpoint": run.checkpoint,
            "fault_dir": run.fault_dir,
            "write_points": str(run.write_points).lower(),
        }
        reader = spark.readStream.format(FORMAT).options(**opts)
        return (reader.name(self.name) if self.name else reader).load()

    def batch(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        from scenarios.replayable_source import FORMAT

        opts = {**run.config.to_options(), **_rows_options(self.rows), "tap": run.tap}
        return spark.read.format(FORMAT).options(**opts).load()

    def describe(self) -> str:
        return "replayable source" + (f" with user rows {self.rows.fn} ({self.rows.schema})" if self.rows else "")


@dataclass(frozen=True)
class FileDirectory:
    """Spark's file source in ``format`` (json, csv, parquet) over files the harness publishes;
    ``rows`` gives the files a user's columns after the provenance columns. ``options`` go to the
    reader as they are (a CSV ``header`` is set by the harness)."""

    format: str = "json"
    rows: Rows | None = None
    options: tuple[tuple[str, str], ...] = ()
    limits_batches: bool = field(default=False, init=False)
    provenance: bool = field(default=True, init=False)

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ConfigError(f"FileDirectory: format {self.format!r} is not one of {sorted(FORMATS)}")
        refused = sorted(k for k, _ in self.options if k.lower() in _HARNESS_OWNED)
        if refused:
            raise ConfigError(
                f"FileDirectory: option(s) {refused} are the harness's: it predicts one batch per run of the "
                "query from what it published (no maxFilesPerTrigger/maxBytesPerTrigger/latestFirst), never "
                "moves or deletes published files (no cleanSource) and writes the CSV header itself"
            )
        if self.format == "csv" and self.rows and any(t in self.rows.schema.upper() for t in _NESTED):
            raise ConfigError(
                f"FileDirectory: schema {self.rows.schema!r} has nested columns, which CSV cannot hold; "
                "use json or parquet"
            )

    @property
    def ddl(self) -> str:
        return self.rows.ddl if self.rows else SCHEMA_DDL

    def fires(self, write_points: bool) -> frozenset[str]:
        return frozenset()

    def _reader_options(self) -> dict[str, str]:
        # A CSV string may hold a newline (quoted): multiLine keeps it one value.
        csv = {"header": "true", "multiLine": "true"} if self.format == "csv" else {}
        return {**csv, **dict(self.options)}

    def feed(self, input_dir: str | Path, rows: Mapping[int, int], rows_per_offset: int) -> dict[str, Any]:
        """Nothing to do here: the driver publishes the tap's files before each run."""
        return {}

    def input_batches(self, run: SourceRun, identity: Sequence[str]) -> pa.Table | None:
        """``None``: rows carry their provenance."""
        return None

    def publish(self, spark: SparkSession, run: SourceRun) -> list[str]:
        """Write the files of what the tap has available (nothing already there is rewritten)."""
        from pyspark.sql.types import StructType, _parse_datatype_string

        schema = _parse_datatype_string(self.ddl)
        assert isinstance(schema, StructType)
        return publish(run.input_dir, run.tap, self.format, run.config, self.rows, schema)

    def stream(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        self.publish(spark, run)
        reader = spark.readStream.format(self.format).schema(self.ddl).options(**self._reader_options())
        return reader.load(run.input_dir)

    def batch(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        self.publish(spark, run)
        reader = spark.read.format(self.format).schema(self.ddl).options(**self._reader_options())
        return reader.load(run.input_dir)

    def describe(self) -> str:
        user = f" with user rows {self.rows.fn} ({self.rows.schema})" if self.rows else ""
        return f"Spark's {self.format} file source over a directory the harness fills{user}"
