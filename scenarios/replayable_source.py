"""``replayable``: a deterministic, replayable PySpark streaming data source.

Rows are pure functions of ``(seed, partition, offset, seq)`` (see
:mod:`scenarios.rowgen`) and carry their provenance columns. What is
*available* is decided by the harness through a tap file (option ``tap``) or
a fixed end (option ``end``, JSON ``{"0": n, ...}``), never by the clock, so
batch boundaries are reproducible. Supports ``ReadMaxRows`` admission control
(option ``max_rows_per_batch``) and ``Trigger.AvailableNow`` where PySpark has them (4.2
and later: :mod:`scenarios.readlimits`); before, ``latestOffset()`` gives all that is
available, so a round's rows come in one batch.

Harness options (all optional): ``checkpoint`` (the query's checkpoint dir,
used to learn the current batch id) and ``fault_dir`` (armed crash points,
see :mod:`fault_injectors.crash`). Crash points fired here:
``source.latest_offset`` and ``after_commit_logged`` (in ``latestOffset``),
``after_offsets_logged`` (in ``partitions``), ``source.read`` and
``sink.write.start|mid|end`` (in ``read``, on the executor).

Usage::

    spark.dataSource.register(ReplayableDataSource)
    df = spark.readStream.format("replayable").option("seed", 7).option("tap", path).load()
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)

from fault_injectors.crash import FaultSite
from fault_injectors.hold import SOURCE_TASK_POINTS, hold_for_sibling_fault
from fault_injectors.sinks import fire_mid_write, task_identity
from harness.inspector.checkpoint import batch_ids, latest_batch_id
from scenarios.admission import Offsets, admit, offsets_from_json, offsets_to_json
from scenarios.readlimits import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from scenarios.rowgen import SCHEMA_DDL, ConfigError, SourceConfig
from scenarios.tap import read_tap
from scenarios.userrows import Rows, source_rows

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

FORMAT = "replayable"


def user_rows(options: Mapping[str, str]) -> Rows | None:
    """The user's columns named by options ``row_schema`` and ``row_fn`` (both or neither); ``None``: the
    built-in 6 columns."""
    opts = {str(k).lower(): v for k, v in options.items()}
    if not (opts.get("row_schema") or opts.get("row_fn")):
        return None
    if not (opts.get("row_schema") and opts.get("row_fn")):
        raise ConfigError(
            "replayable source: user rows need both options 'row_schema' (DDL of your columns) "
            "and 'row_fn' ('module:function' of seed, partition, offset, seq)"
        )
    return Rows(opts["row_schema"], opts["row_fn"])


class SourceOptions:
    """Parsed options of the replayable source (data config + harness wiring)."""

    def __init__(self, options: Mapping[str, str]) -> None:
        opts = {str(k).lower(): v for k, v in options.items()}
        self.config = SourceConfig.from_options(opts)
        self.tap: str | None = opts.get("tap")
        self.end: Offsets | None = None
        if opts.get("end"):
            try:
                self.end = offsets_from_json(json.loads(opts["end"]))
            except ValueError as exc:
                raise ConfigError(f"replayable source: option end={opts['end']!r} is not an offset JSON") from exc
        if self.tap is None and self.end is None:
            raise ConfigError(
                "replayable source: set option 'tap' (path of a tap file the harness advances) "
                'or \'end\' (fixed end offsets, JSON like {"0": 100, "1": 100})'
            )
        raw_max = opts.get("max_rows_per_batch")
        self.max_rows_per_batch = int(raw_max) if raw_max not in (None, "", "null") else None
        if self.max_rows_per_batch is not None and self.max_rows_per_batch < 1:
            raise ConfigError("replayable source: max_rows_per_batch must be >= 1")
        self.checkpoint: str | None = opts.get("checkpoint")
        #: Whether read() fires the sink.write.* points (off when a crash-injecting sink wrapper fires them).
        self.write_points = str(opts.get("write_points", "true")).lower() != "false"
        self.fault_dir: str | None = opts.get("fault_dir")
        #: A user's columns after the provenance columns (options ``row_schema`` and ``row_fn``).
        self.rows = user_rows(opts)

    def available(self) -> Offsets:
        """End offsets of the data that exists now (``end`` wins over ``tap``)."""
        if self.end is not None:
            avail = dict(self.end)
        else:
            assert self.tap is not None
            avail = read_tap(self.tap)
        return {p: int(avail.get(p, 0)) for p in range(self.config.partitions)}

    def max_offsets(self, max_rows: int) -> int:
        return max(1, max_rows // self.config.rows_per_offset)


class RangePartition(InputPartition):
    """Offsets ``[start, end)`` of one source partition, for batch ``batch_id``."""

    def __init__(
        self,
        partition: int,
        start: int,
        end: int,
        batch_id: int | None,
        fault_dir: str | None,
        checkpoint: str | None = None,
        write_points: bool = True,
    ) -> None:
        super().__init__((partition, start, end))
        self.partition = partition
        self.start = start
        self.end = end
        self.batch_id = batch_id
        self.fault_dir = fault_dir
        self.checkpoint = checkpoint
        self.write_points = write_points


def read_range(
    config: SourceConfig, part: RangePartition, rows: Rows | None = None, schema: StructType | None = None
) -> Iterator[tuple[Any, ...]]:
    """Rows of ``part`` (with ``rows``: the provenance columns and the user's, in ``schema``).
    Crash points fired here (the task reads and writes in
    one pass, so these are also the sink task's points for any sink):
    ``source.read`` and ``sink.write.start`` before the first row,
    ``sink.write.mid`` after ``after_rows`` rows, ``sink.write.end`` after the last."""
    if rows is not None:
        assert schema is not None
        generated = source_rows(config, rows, schema, part.partition, part.start, part.end)
    else:
        generated = config.rows(part.partition, part.start, part.end)
    if part.fault_dir is None:
        yield from generated
        return
    site = FaultSite(part.fault_dir, part.checkpoint)
    _, _, attempt = task_identity()
    held = SOURCE_TASK_POINTS if part.write_points else ("source.read",)
    hold_for_sibling_fault(site, held, part.batch_id, part.partition, attempt)
    site.maybe_fire("source.read", part.batch_id, partition=part.partition, attempt=attempt)
    if not part.write_points:  # a crash-injecting sink wrapper fires the write points itself
        yield from generated
        return
    site.maybe_fire("sink.write.start", part.batch_id, partition=part.partition, attempt=attempt)
    yield from fire_mid_write(generated, site, part.batch_id, part.partition, attempt)
    site.maybe_fire("sink.write.end", part.batch_id, partition=part.partition, attempt=attempt)


class ReplayableStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Streaming reader; offsets are ``{"<partition>": <end offset>, ...}``."""

    def __init__(self, options: Mapping[str, str], schema: StructType | None = None) -> None:
        self.opts = SourceOptions(options)
        self.schema = schema
        self.site = FaultSite(self.opts.fault_dir, self.opts.checkpoint)
        self._target: Offsets | None = None

    def initialOffset(self) -> dict[str, int]:
        return offsets_to_json({p: 0 for p in range(self.opts.config.partitions)})

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.opts.max_rows_per_batch is None:
            return ReadAllAvailable()
        return ReadMaxRows(self.opts.max_rows_per_batch)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self.opts.available()

    def latestOffset(self, start: dict[str, int] | None = None, limit: ReadLimit | None = None) -> dict[str, int]:
        self._fire_after_commit_logged()
        if self.opts.checkpoint:
            self.site.maybe_fire("source.latest_offset", self._planning_batch_id())
        available = self._target if self._target is not None else self.opts.available()
        if start is None:  # a PySpark without admission control (before 4.2): all of it, a round's one batch
            return offsets_to_json(available)
        max_offsets = self.opts.max_offsets(limit.max_rows) if isinstance(limit, ReadMaxRows) else None
        return offsets_to_json(admit(offsets_from_json(start), available, max_offsets))

    def reportLatestOffset(self) -> dict[str, int]:
        return offsets_to_json(self.opts.available())

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        batch_id = latest_batch_id(self.opts.checkpoint) if self.opts.checkpoint else None
        self.site.maybe_fire("after_offsets_logged", batch_id, start=start, end=end)
        s, e = offsets_from_json(start), offsets_from_json(end)
        if all(e[p] <= s.get(p, 0) for p in e):
            return []
        # One input partition per source partition (empty ranges included), so
        # Spark's task partition id equals the source partition number.
        ckpt = self.opts.checkpoint
        return [
            RangePartition(
                p, s.get(p, 0), max(e[p], s.get(p, 0)), batch_id, self.opts.fault_dir, ckpt, self.opts.write_points
            )
            for p in sorted(e)
        ]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, RangePartition)
        return read_range(self.opts.config, partition, self.opts.rows, self.schema)

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to release: data is a pure function of offsets."""

    def _planning_batch_id(self) -> int:
        """The batch the next ``latestOffset`` call plans: one past the newest
        committed batch (a logged but uncommitted batch is re-run, not re-planned)."""
        assert self.opts.checkpoint
        ckpt = Path(self.opts.checkpoint)
        committed = batch_ids(ckpt / "commits")
        return committed[-1] + 1 if committed else 0

    def _fire_after_commit_logged(self) -> None:
        if not self.opts.checkpoint:
            return
        commits = Path(self.opts.checkpoint) / "commits"
        for rule in self.site.armed_at("after_commit_logged"):
            if rule.batch is not None and (commits / str(rule.batch)).exists():
                self.site.maybe_fire("after_commit_logged", rule.batch)


class ReplayableBatchReader(DataSourceReader):
    """Batch reader over offsets ``[0, end)`` of every partition (the oracle's input)."""

    def __init__(self, options: Mapping[str, str], schema: StructType | None = None) -> None:
        self.opts = SourceOptions(options)
        self.schema = schema

    def partitions(self) -> Sequence[InputPartition]:
        return [RangePartition(p, 0, n, None, None) for p, n in sorted(self.opts.available().items()) if n > 0]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, RangePartition)
        return read_range(self.opts.config, partition, self.opts.rows, self.schema)


class ReplayableDataSource(DataSource):
    """The ``replayable`` format (batch and streaming)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        rows = user_rows(self.options)
        return rows.ddl if rows else SCHEMA_DDL

    def reader(self, schema: Any) -> DataSourceReader:
        return ReplayableBatchReader(self.options, schema)

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return ReplayableStreamReader(self.options, schema)
