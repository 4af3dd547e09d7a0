"""A Delta table as a streaming source: Spark's Delta source over a table the harness appends to.

The table is ``<input dir>/table``. Before a query starts (:meth:`DeltaTableSource.publish`, in the driver),
the harness creates it empty (version 0, the rows' schema, no file) and appends what the tap has available
and the table lacks, one Delta commit per partition and range, each with one data file, written by delta-rs
(``deltalake``: no JVM, so a driver killed mid-way leaves either the whole commit or none of it). What the
table already holds is read from the table itself (the highest ``offset`` per ``partition``): publishing again
after a kill adds only the missing ranges, and the table is a function of the tap.

The query reads with ``readStream.format("delta")``, ``startingVersion=0`` and ``maxFilesPerTrigger``
(default 1: one version a batch) or ``maxBytesPerTrigger``. Rows carry their provenance; batches are located by
:meth:`DeltaTableSource.input_batches` from the Delta source's offsets in ``offsets/N``
(``reservoirVersion``, ``index``): with one file per version, batch N read version ``v`` when its start
offset is before ``(v, file)`` and its end at or after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.rowgen import ConfigError
from scenarios.sources import SourceRun
from scenarios.tap import read_tap

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

#: Column of :meth:`DeltaTableSource.input_batches` with the batch id (``harness.verdict.check``'s).
BATCH_COLUMN = "__batch_id"
#: Reader options the harness sets itself (lower case).
_HARNESS_OWNED = {"maxfilespertrigger", "maxbytespertrigger", "startingversion", "startingtimestamp"}


def source_table(run: SourceRun) -> Path:
    """The run's input table: ``<input dir>/table``."""
    return Path(run.input_dir) / "table"


def _arrow_schema() -> pa.Schema:
    """:data:`scenarios.rowgen.SCHEMA_DDL` in Arrow (built here: parsing DDL with pyspark needs a JVM)."""
    import pyarrow as pa

    return pa.schema([
        ("partition", pa.int32()), ("offset", pa.int64()), ("seq", pa.int32()), ("key", pa.int32()),
        ("value", pa.int64()), ("event_time", pa.timestamp("us", tz="UTC")),
    ])  # fmt: skip


def published_ends(table: Path) -> dict[int, int]:
    """Per partition, the end of the offsets the table holds (its highest ``offset`` + 1)."""
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(str(table)):
        return {}
    data = DeltaTable(str(table)).to_pyarrow_table(columns=["partition", "offset"])
    ends: dict[int, int] = {}
    for p, o in zip(data.column("partition").to_pylist(), data.column("offset").to_pylist(), strict=True):
        ends[p] = max(ends.get(p, 0), o + 1)
    return ends


def publish(run: SourceRun) -> list[tuple[int, int, int]]:
    """Create the table if it is not there and append what the tap has and the table lacks; returns the
    ``(partition, start, end)`` ranges appended, one Delta commit each."""
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    table = source_table(run)
    schema = _arrow_schema()
    if not DeltaTable.is_deltatable(str(table)):
        table.mkdir(parents=True, exist_ok=True)
        DeltaTable.create(str(table), schema=schema, mode="ignore")
    done = published_ends(table)
    written = []
    for partition, end in sorted(read_tap(run.tap).items()):
        start = done.get(partition, 0)
        if end <= start:
            continue
        rows = list(run.config.rows(partition, start, end))
        data = pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in rows], schema=schema)
        write_deltalake(str(table), data, mode="append")
        written.append((partition, start, end))
    return written


@dataclass(frozen=True)
class DeltaTableSource:
    """Spark's Delta source over a table the harness fills (module docstring). ``max_files_per_trigger`` (one
    version a batch by default) or ``max_bytes_per_trigger`` (``"4k"``) limit a batch; ``options`` go to the
    reader as they are (the harness owns the rate limits and the starting version)."""

    max_files_per_trigger: int | None = 1
    max_bytes_per_trigger: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    limits_batches: bool = field(default=False, init=False)
    provenance: bool = field(default=True, init=False)

    def __post_init__(self) -> None:
        refused = sorted(k for k, _ in self.options if k.lower() in _HARNESS_OWNED)
        if refused:
            raise ConfigError(
                f"DeltaTableSource: option(s) {refused} are the harness's: give max_files_per_trigger= or "
                "max_bytes_per_trigger=; the query always starts at the table's first version"
            )
        if self.max_files_per_trigger is not None and self.max_files_per_trigger < 1:
            raise ConfigError(f"DeltaTableSource: max_files_per_trigger={self.max_files_per_trigger} is not >= 1")

    def fires(self, write_points: bool) -> frozenset[str]:
        return frozenset()

    def feed(self, input_dir: str | Path, rows: Mapping[int, int], rows_per_offset: int) -> dict[str, Any]:
        """Nothing to do here: the driver appends the tap's rows before each run."""
        return {}

    def _reader_options(self) -> dict[str, str]:
        # From version 0 (the empty creation) on, as changes: every batch's files are named by version and
        # file index. Without it, Spark reads the table's snapshot first, its files indexed in an order the
        # log does not record.
        limits = {"startingVersion": "0"}
        if self.max_files_per_trigger is not None:
            limits["maxFilesPerTrigger"] = str(self.max_files_per_trigger)
        if self.max_bytes_per_trigger is not None:
            limits["maxBytesPerTrigger"] = self.max_bytes_per_trigger
        return {**limits, **dict(self.options)}

    def stream(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        publish(run)
        return spark.readStream.format("delta").options(**self._reader_options()).load(str(source_table(run)))

    def batch(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        publish(run)
        return spark.read.format("delta").load(str(source_table(run)))

    def input_batches(self, run: SourceRun, identity: Sequence[str]) -> pa.Table | None:
        """The ``identity`` columns of the rows each planned batch read, with :data:`BATCH_COLUMN` (see the
        module docstring); ``None`` when the table or the checkpoint cannot be read."""
        return read_input_batches(source_table(run), Path(run.checkpoint), identity)

    def describe(self) -> str:
        return f"Spark's Delta source over a table the harness fills ({self._reader_options() or 'no limit'})"


def _position(raw: Any) -> tuple[int, int] | None:
    if isinstance(raw, Mapping) and isinstance(raw.get("reservoirVersion"), int):
        return int(raw["reservoirVersion"]), int(raw.get("index", -1))
    return None


def _read_by(start: tuple[int, int] | None, end: tuple[int, int], version: int) -> bool:
    """Whether the batch ``(start, end]`` read the one file of ``version`` (index -1: before its files)."""
    after_start = start is None or start[0] < version or (start[0] == version and start[1] < 0)
    return after_start and (end[0] > version or (end[0] == version and end[1] >= 0))


def read_input_batches(table: Path, checkpoint: Path, identity: Sequence[str]) -> pa.Table | None:
    """:meth:`DeltaTableSource.input_batches` of a table and a checkpoint."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from harness.inspector import CheckpointError, read_batches
    from scenarios.delta.log import DeltaLogError, read_log

    try:
        versions = [(c.version, c.adds) for c in read_log(table) if c.adds]
        records = read_batches(checkpoint)
    except (DeltaLogError, CheckpointError, OSError):
        return None
    parts = []
    for rec in records:
        if rec.offsets is None or not rec.offsets.sources:
            continue
        end = _position(rec.offsets.sources[0])
        if end is None:
            continue
        start = _position(rec.start[0]) if rec.start and rec.start[0] is not None else None
        for version, adds in versions:
            if not _read_by(start, end, version):
                continue
            for path in adds:
                rows = pq.read_table(table / path, columns=list(identity))
                parts.append(rows.append_column(BATCH_COLUMN, pa.array([rec.batch_id] * rows.num_rows, pa.int64())))
    if not parts:
        return None
    return pa.concat_tables(parts)
