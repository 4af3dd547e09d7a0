"""A user's Python ``DataSource`` as a scenario's input (``Scenario(source=PythonSource(...))``).

The source is named the way the conformance kit names it (``path/to/module.py:Class`` or
``package.module:Class``), and so is its optional *context factory* (:mod:`harness.sources.contexts`),
which the runner calls in the run's ``input/`` directory to add data before each round and the driver
calls again to learn the options that read it. Without a context, the source's data must arrive by
itself (a rate-like source) or be fixed by its options.

- The oracle's input is the source's own rows of ``[initialOffset(), end)``, read by a fresh reader in
  the driver, where ``end`` is the source offset of the newest committed batch.
- Anomalies are located by the source's own offsets: :meth:`PythonSource.input_batches` lists the
  identity of every row each batch read (``[start, end)`` of its ``offsets/N``), and the verdict names
  the batch and its offsets for an anomalous row (:func:`harness.verdict.check.locate_by_input`).
- Batch ids are predicted as one batch per run of the query (``Trigger.AvailableNow``); a source whose
  own admission control splits a run into more batches only moves a planned kill to earlier data.
- The source fires no crash point itself: ``offsets/N`` and ``commits/N`` kills come from the checkpoint
  watcher (SIGKILL only), and sink faults from the sink's ``crash_injecting`` wrapper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.sources.contexts import SourceContext, make_context
from harness.sources.loading import LoadError, add_import_root, load, resolve
from harness.sources.reader import SourceUnderTest
from harness.verdict.check import INPUT_BATCH_COLUMN

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.datasource import DataSource

    from scenarios.sources import SourceRun


@dataclass(frozen=True)
class PythonSource:
    """``source``: the ``DataSource`` subclass (``path.py:Class`` | ``module:Class``); ``context``: its
    context factory (``path.py:fn`` | ``module:fn``) or ``None``; ``options``: reader options that override
    the context's. Both references are checked (not imported) when the scenario is built."""

    #: Your ``DataSource`` subclass, as ``path/to/module.py:Class`` or ``package.module:Class``.
    source: str
    #: Its context factory (``path.py:fn`` | ``module:fn``;
    #: :data:`~harness.sources.contexts.ContextFactory`), called in the run's ``input/`` directory
    #: to add each round's rows; ``None``: the data arrives by itself.
    context: str | None = None
    #: Reader options, overriding the ones the context's ``options()`` gives.
    options: tuple[tuple[str, str], ...] = ()
    limits_batches: bool = field(default=False, init=False)
    #: The rows carry no ``partition, offset, seq`` columns: a scenario names its own identity columns.
    provenance: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        for ref, what in ((self.source, "PythonSource source"), (self.context, "PythonSource context")):
            if ref is not None:
                add_import_root(resolve(ref, what).root)  # children (drivers, Spark's workers) import it too

    def fires(self, write_points: bool) -> frozenset[str]:
        return frozenset()

    # -- loading -------------------------------------------------------------------------------------
    def source_class(self) -> type[DataSource]:
        """The ``DataSource`` subclass; :class:`LoadError` (one line) for anything else."""
        from pyspark.sql.datasource import DataSource

        cls, _ = load(self.source, "PythonSource source")
        if not (isinstance(cls, type) and issubclass(cls, DataSource)):
            raise LoadError(f"PythonSource source {self.source!r} is {cls!r}, not a pyspark.sql.datasource.DataSource")
        return cls

    def _context(self, input_dir: str | Path) -> SourceContext:
        factory = load(self.context, "PythonSource context")[0] if self.context else None
        return make_context(factory, Path(input_dir))

    def reader_options(self, input_dir: str | Path) -> dict[str, str]:
        """The context's options, overridden by this spec's own."""
        ctx = self._context(input_dir)
        try:
            opts = {str(k): str(v) for k, v in ctx.options().items()}
        finally:
            ctx.close()
        return {**opts, **dict(self.options)}

    def under_test(self, input_dir: str | Path) -> SourceUnderTest:
        return SourceUnderTest(self.source_class(), self.reader_options(input_dir))

    # -- the run -------------------------------------------------------------------------------------
    def feed(self, input_dir: str | Path, rows: Mapping[int, int], rows_per_offset: int) -> dict[str, Any]:
        """Add the round's rows (the schedule's offset units x ``rows_per_offset``) through the context."""
        total = sum(rows.values()) * rows_per_offset
        if self.context is None:
            return {"source_rows": 0, "note": "no context: the source's data arrives by itself"}
        ctx = self._context(input_dir)
        try:
            ctx.add_data(total)
        finally:
            ctx.close()
        return {"source_rows": total}

    def stream(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        from harness.sources.initial import recording_source

        cls = self.source_class()
        spark.dataSource.register(recording_source(cls, _record(run), Path(run.checkpoint)))
        return spark.readStream.format(cls.name()).options(**self.reader_options(run.input_dir)).load()

    def batch(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        """The source's rows of ``[initialOffset(), end of the newest committed batch)``, where the initial offset
        is the one Spark planned batch 0 with (:func:`harness.sources.initial.oracle_ranges`)."""
        from harness.sources.initial import oracle_ranges

        source = self.under_test(run.input_dir)
        end = _committed_end(run.checkpoint)
        reader = source.reader()
        try:
            rows: list[Any] = []
            if end is not None:
                spans = oracle_ranges(_record(run), Path(run.checkpoint), end, reader.initial)
                rows = [row for a, b in spans for row in reader.raw_rows(a, b)]
        finally:
            reader.stop()
        return spark.createDataFrame(rows, schema=source.datasource().schema())

    def input_batches(self, run: SourceRun, identity: Sequence[str]) -> pa.Table | None:
        """Per batch of the checkpoint's offset log, the ``identity`` columns of each row it read plus
        :data:`harness.verdict.check.INPUT_BATCH_COLUMN`; ``None`` when the source's rows hold none of the
        identity columns."""
        import pyarrow as pa

        from harness.inspector import CheckpointError, read_batches
        from harness.sources.initial import used_start

        source = self.under_test(run.input_dir)
        try:
            records = read_batches(run.checkpoint)
        except (CheckpointError, OSError):
            return None
        names = _column_names(source)
        columns: dict[str, list[Any]] = {}
        batch_ids: list[int] = []
        for rec in records:
            if rec.offsets is None or not rec.offsets.sources or rec.offsets.sources[0] is None:
                continue
            start = rec.start[0] if rec.start and rec.start[0] is not None else None
            reader = source.reader()
            try:
                first = start if start is not None else used_start(_record(run), reader.initial)
                rows = reader.raw_rows(first, rec.offsets.sources[0])
            finally:
                reader.stop()
            for row in rows:
                record = _as_dict(row, names)
                for name in identity:
                    if name in record:
                        columns.setdefault(name, []).append(record[name])
                batch_ids.append(rec.batch_id)
        present = [c for c in identity if c in columns and len(columns[c]) == len(batch_ids)]
        if not present:
            return None
        return pa.table({**{c: columns[c] for c in present}, INPUT_BATCH_COLUMN: batch_ids})

    def describe(self) -> str:
        ctx = f" fed by {self.context}" if self.context else " (no context: its data arrives by itself)"
        return f"Python DataSource {self.source}{ctx}"


def _as_dict(row: Any, names: Sequence[str]) -> dict[str, Any]:
    """One row of ``read()`` as ``{column: value}`` (tuples by ``names``, the source's schema order)."""
    if isinstance(row, dict):
        return row
    if hasattr(row, "asDict"):
        return dict(row.asDict())
    return dict(zip(names, row, strict=False)) if isinstance(row, tuple | list) else {names[0]: row}


def _column_names(source: SourceUnderTest) -> list[str]:
    schema = source.datasource().schema()
    if isinstance(schema, str):
        from harness.sources.reader import schema_arg

        parsed = schema_arg(schema)
        if isinstance(parsed, str):  # nested DDL: top-level names only
            from scenarios.userrows import top_level_names

            return list(top_level_names(schema))
        schema = parsed
    return [f.name for f in schema.fields]


def _record(run: SourceRun) -> Path:
    """Where the run's ``initialOffset()`` answers are recorded: beside its checkpoint."""
    from harness.sources.initial import RECORD_FILE

    return Path(run.checkpoint).parent / RECORD_FILE


def _committed_end(checkpoint: str | Path) -> Any:
    """The source offset of the newest committed batch (``None`` before the first)."""
    from harness.inspector import batch_ids, read_offsets

    ids = batch_ids(Path(checkpoint) / "commits")
    return read_offsets(checkpoint, ids[-1]).sources[0] if ids else None
