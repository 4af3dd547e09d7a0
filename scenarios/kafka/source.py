"""A Kafka topic as a scenario's input (``Scenario(source=KafkaTopic(...))``), read by Spark's own Kafka source.

- The harness produces the tap's rows to a topic of the run's broker (:mod:`scenarios.kafka.broker`; its
  address and the topic name reach the driver as the run's resources ``bootstrap`` and ``topic``): tap
  partition ``p`` is Kafka partition ``p`` and one record holds one row, so a row's provenance columns
  ``(partition, offset)`` are its Kafka partition and offset (scenarios keep ``rows_per_offset = 1``).
  Each record's value is the row as JSON (provenance columns first, then the user's :class:`Rows`);
  ``key`` names a column whose value becomes the record key; ``headers`` adds the provenance as headers.
- Rows are produced in the driver before each run of the query, only those the topic lacks (its end
  offsets say where each partition stands), so a driver killed while producing leaves a prefix that the
  next run completes.
- The query reads the topic with Spark's Kafka source and the user's ``options``
  (``startingOffsets``, ``maxOffsetsPerTrigger``, ``minOffsetsPerTrigger``, ``failOnDataLoss``, ...).
  ``raw=False`` parses the JSON value into the row's columns; ``raw=True`` hands the transform Spark's Kafka
  columns (``key, value, topic, partition, offset, timestamp, timestampType``), as a production pipeline
  reads them, and the scenario names its own ``identity``.
- The oracle's input is the topic's records of ``[start, newest committed end)``: ``start`` is what Spark's
  Kafka source recorded for batch 0 (``sources/0/0``), 0 for a partition it did not know then; ``end`` is the
  newest committed batch's ``offsets/N``. What the broker still holds is read back (``read_committed``); records
  deleted since (retention, an ``age_out_records`` nemesis) are regenerated from the tap, as rows are pure
  functions of seed, partition and offset (their timestamp is unknown: null), so a query that skipped them
  shows them ``lost``. Both paths apply the same parsing, so the transform sees the same rows.
- Faults (:mod:`scenarios.kafka.faults`): the source nemeses ``age_out_records`` and ``add_partitions``
  between runs, and ``kill_broker`` (:data:`fault_actions`) at a crash point, when the harness runs the broker.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.actions import KILL_BROKER
from scenarios.kafka.offsets import aged_out_ranges, oracle_ranges
from scenarios.kafka.resource import BOOTSTRAP_ENV, BROKER_FILE_ENV, run_topic
from scenarios.rowgen import SCHEMA_DDL, ConfigError, SourceConfig
from scenarios.tap import read_tap
from scenarios.userrows import Rows, as_record, json_value, source_rows, top_level_names

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from scenarios.kafka.client import Fetched, Record
    from scenarios.sources import SourceDamage, SourceRun

#: Kafka source options the harness sets itself (lower case): where the topic is and how it is named.
HARNESS_OWNED = {"kafka.bootstrap.servers", "subscribe", "subscribepattern", "assign", "endingoffsets"}
#: Kafka source options a scenario may set (lower case); anything else is refused with this list.
USER_OPTIONS = {
    "startingoffsets",
    "startingoffsetsbytimestamp",
    "startingoffsetsbytimestampstrategy",
    "startingtimestamp",
    "maxoffsetspertrigger",
    "minoffsetspertrigger",
    "maxtriggerdelay",
    "failondataloss",
    "minpartitions",
    "includeheaders",
    "kafkaconsumer.polltimeoutms",
    "fetchoffset.numretries",
    "fetchoffset.retryintervalms",
    "groupidprefix",
    "kafka.isolation.level",
}
_KAFKA_DDL = (
    "key BINARY, value BINARY, topic STRING, partition INT, offset BIGINT, timestamp TIMESTAMP, timestampType INT"
)
_HEADERS_DDL = "headers ARRAY<STRUCT<key: STRING, value: BINARY>>"


@dataclass(frozen=True)
class KafkaTopic:
    """Spark's Kafka source over a topic the harness fills on the run's broker, one record per
    row (tap partition ``p`` is Kafka partition ``p``); the oracle reads the records back."""

    #: Your columns after the provenance columns (:class:`Rows`); ``None``: the replayable source's
    #: columns.
    rows: Rows | None = None
    #: Kafka source options (``startingOffsets``, ``maxOffsetsPerTrigger``, ``failOnDataLoss``,
    #: ``kafka.*``...); the harness's own (``kafka.bootstrap.servers``, ``subscribe``, ``assign``,
    #: ...) are refused.
    options: tuple[tuple[str, str], ...] = ()
    #: A column of the rows whose value (as JSON) becomes each record's key; ``None``: no key.
    key: str | None = None
    #: Add ``partition`` and ``offset`` headers to every record (and read them with
    #: ``includeHeaders``).
    headers: bool = False
    #: Hand the transform Spark's Kafka columns (``key, value, topic, partition, offset, timestamp,
    #: timestampType``) instead of the parsed row; the scenario names its ``identity`` (Kafka's
    #: ``partition, offset``, or yours).
    raw: bool = False
    #: Appended to the run's topic name: a query subscribed to another topic of the same records (the upgrade
    #: pair that changes the subscribed topic).
    topic_suffix: str = ""
    limits_batches: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        owned = sorted(k for k, _ in self.options if k.lower() in HARNESS_OWNED)
        if owned:
            raise ConfigError(
                f"KafkaTopic: option(s) {owned} are the harness's: it creates the topic on the run's broker and "
                "subscribes the query to it"
            )
        unknown = sorted(k for k, _ in self.options if k.lower() not in USER_OPTIONS and not k.startswith("kafka."))
        if unknown:
            raise ConfigError(f"KafkaTopic: unknown Kafka source option(s) {unknown}; known: {sorted(USER_OPTIONS)}")
        if self.key is not None and self.key not in ("partition", "offset", "seq", *self._user_columns()):
            raise ConfigError(f"KafkaTopic: key column {self.key!r} is not a column of the rows ({self.ddl})")

    @property
    def provenance(self) -> bool:
        """Parsed rows carry ``partition, offset, seq``; raw records leave them to the transform."""
        return not self.raw

    @property
    def identity_columns(self) -> tuple[str, ...]:
        """Raw records' columns naming one record (Kafka's coordinates), accepted as an identity."""
        return ("topic", "partition", "offset") if self.raw else ()

    @property
    def ddl(self) -> str:
        return self.rows.ddl if self.rows else SCHEMA_DDL

    def _user_columns(self) -> list[str]:
        return list(top_level_names(self.ddl))

    def fires(self, write_points: bool) -> frozenset[str]:
        return frozenset()

    # -- faults (scenarios.kafka.faults) ---------------------------------------------------------------
    @property
    def fault_actions(self) -> tuple[str, ...]:
        """Fault actions on the run's servers a campaign may draw: ``kill_broker``, unless the broker is one
        the harness does not run (``--kafka HOST:PORT``)."""
        given = os.environ.get(BOOTSTRAP_ENV) and not os.environ.get(BROKER_FILE_ENV)
        return () if given else (KILL_BROKER.name,)

    def nemeses(self) -> dict[str, str]:
        """Source nemeses (:mod:`scenarios.kafka.faults`). ``age_out_records`` is left out where the verdict
        could not tell its allowed loss from a violation: raw records (no provenance) with
        ``failOnDataLoss=false``."""
        from scenarios.kafka.faults import AGE_OUT, KAFKA_NEMESES, loss_setting

        skipped = not self.provenance and loss_setting(self.options)[1]
        return {k: v for k, v in KAFKA_NEMESES.items() if not (skipped and k == AGE_OUT)}

    def apply_nemesis(self, name: str, run: SourceRun) -> SourceDamage:
        from scenarios.kafka.faults import apply

        return apply(self, name, run)

    def resource(self, workdir: Path) -> AbstractContextManager[dict[str, str]]:
        """The run's broker and topic (:func:`scenarios.kafka.resource.kafka_resource`)."""
        from scenarios.kafka.resource import kafka_resource

        return kafka_resource(workdir)

    def shared(self, workdir: Path) -> AbstractContextManager[str]:
        """One broker for every run of a campaign (:func:`scenarios.kafka.resource.shared_broker`)."""
        from scenarios.kafka.resource import shared_broker

        return shared_broker(workdir)

    def feed(self, input_dir: str | Path, rows: Mapping[int, int], rows_per_offset: int) -> dict[str, Any]:
        """Nothing here: the driver produces the tap's rows before each run (:meth:`publish`)."""
        if rows_per_offset != 1:
            raise ConfigError(
                f"KafkaTopic: rows_per_offset is {rows_per_offset}; a Kafka scenario keeps 1 (one record per "
                "offset, so a row's provenance offset is its Kafka offset)"
            )
        return {}

    def input_batches(self, run: SourceRun, identity: Sequence[str]) -> pa.Table | None:
        """``None``: rows carry their provenance (partition and offset are the Kafka ones)."""
        return None

    # -- producing -----------------------------------------------------------------------------------
    def _schema(self) -> StructType:
        from pyspark.sql.types import StructType, _parse_datatype_string

        schema = _parse_datatype_string(self.ddl)
        assert isinstance(schema, StructType)
        return schema

    def records(self, config: SourceConfig, partition: int, start: int, end: int) -> Iterator[Record]:
        """The records of tap offsets ``[start, end)`` of ``partition`` (one row each)."""
        from scenarios.kafka.client import Record

        # The built-in columns need no DDL parsing (which needs a SparkContext in PySpark 4.2).
        schema = self._schema() if self.rows else None
        names = top_level_names(SCHEMA_DDL)
        for row in source_rows(config, self.rows, schema, partition, start, end):  # type: ignore[arg-type]
            where = f"row (partition={partition}, offset={row[1]}, seq={row[2]})"
            rec = dict(zip(names, row, strict=True)) if schema is None else as_record(row, schema, where)
            value = json.dumps(json_value(rec)).encode()
            key = None if self.key is None else json.dumps(json_value(rec[self.key])).encode()
            headers = (("partition", str(partition).encode()), ("offset", str(row[1]).encode())) if self.headers else ()
            yield Record(partition, value, key, headers)

    def where(self, run: SourceRun) -> tuple[str, str]:
        """The run's broker and the topic this source reads (the run's topic, with :attr:`topic_suffix`)."""
        bootstrap, topic = run_topic(run)
        return bootstrap, topic + self.topic_suffix

    def publish(self, run: SourceRun) -> dict[int, int]:
        """Create the topic if needed (grow it to the tap's partitions) and produce what the tap has available
        and the topic lacks; returns the number of records produced per partition."""
        from scenarios.kafka import client

        bootstrap, topic = self.where(run)
        available = read_tap(run.tap)
        if not client.topic_exists(bootstrap, topic):
            client.create_topic(bootstrap, topic, max(len(available), run.config.partitions))
        have = client.end_offsets(bootstrap, topic)
        if any(p not in have for p in available):  # the tap grew partitions (add_partitions): so does the topic
            client.add_partitions(bootstrap, topic, max(available) + 1)
            have = client.end_offsets(bootstrap, topic)
        produced: dict[int, int] = {}
        batch: list[Record] = []
        for partition, end in sorted(available.items()):
            start = have[partition]
            if end > start:
                batch.extend(self.records(run.config, partition, start, end))
                produced[partition] = end - start
        if batch:
            client.produce(bootstrap, topic, batch)
        return produced

    # -- reading -------------------------------------------------------------------------------------
    def _reader_options(self, run: SourceRun) -> dict[str, str]:
        bootstrap, topic = self.where(run)
        opts = {"kafka.bootstrap.servers": bootstrap, "subscribe": topic, "startingOffsets": "earliest"}
        if self.headers:
            opts["includeHeaders"] = "true"
        return {**opts, **dict(self.options)}

    def _parsed(self, df: DataFrame) -> DataFrame:
        if self.raw:
            return df
        from pyspark.sql import functions as F

        return df.select(F.from_json(F.col("value").cast("string"), self.ddl).alias("r")).select("r.*")

    def stream(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        from scenarios.kafka.spread import spread, wait_spreading

        wait_spreading(self.where(run))  # a spread from an earlier query of this driver ends first
        if run.spread_s > 0:
            spread(self, run)
        else:
            self.publish(run)
        return self._parsed(spark.readStream.format("kafka").options(**self._reader_options(run)).load())

    def batch(self, spark: SparkSession, run: SourceRun) -> DataFrame:
        """The topic's records the committed batches cover: read back from the broker, and regenerated from the
        tap where the broker deleted them (module docstring)."""
        from scenarios.kafka import client

        bootstrap, topic = self.where(run)
        log_start = client.start_offsets(bootstrap, topic)
        ranges = oracle_ranges(run.checkpoint, topic, log_start)
        fetched = list(client.read_range(bootstrap, topic, ranges) if ranges else [])
        fetched += self.regenerated(run, aged_out_ranges(run.checkpoint, topic, log_start))
        rows = [
            (f.key, f.value, topic, f.partition, f.offset, None if f.timestamp_ms < 0 else _ts(f.timestamp_ms), 0)
            + (([(k, v) for k, v in f.headers],) if self.headers else ())
            for f in fetched
        ]
        ddl = _KAFKA_DDL + (f", {_HEADERS_DDL}" if self.headers else "")
        return self._parsed(spark.createDataFrame(rows, ddl))

    def caught_up(self, offset: Any, run: SourceRun) -> bool:
        """Whether a committed Kafka source offset (an ``offsets/N`` entry) covers every record the tap has made
        available (one record per tap offset) and the topic holds: an epoch run (continuous, Real-time Mode)
        stops there (:mod:`harness.engine.epochs`)."""
        return not self.unread([offset], run)

    def unread(self, sources: Sequence[Any] | None, run: SourceRun) -> str:
        """What of the topic the source offsets of a committed batch (every source's entry of ``offsets/N``;
        ``None`` before any batch) have not reached: ``"topic T: partition 0 at offset 3 of 20, ..."``, or ``""``
        when they cover every record the tap made available and the topic holds. No entry naming the topic (a
        query subscribed elsewhere) has reached nothing of it."""
        from scenarios.kafka import client
        from scenarios.kafka.offsets import kafka_offsets

        bootstrap, topic = self.where(run)
        entries = (kafka_offsets(s, topic) for s in (sources or ()))
        reached = next((e for e in entries if e is not None), {})
        due = dict(read_tap(run.tap))
        for p, end in client.end_offsets(bootstrap, topic).items():
            due[p] = max(due.get(p, 0), end)
        short = [f"partition {p} at offset {reached.get(p, 0)} of {end}" for p, end in sorted(due.items())
                 if reached.get(p, 0) < end]  # fmt: skip
        return f"topic {topic}: " + ", ".join(short) if short else ""

    def regenerated(self, run: SourceRun, ranges: Mapping[int, tuple[int, int]]) -> list[Fetched]:
        """The records of ``ranges`` as the harness produced them (from the tap's row function), for records the
        broker no longer holds; their timestamp is unknown (-1)."""
        from scenarios.kafka.client import Fetched

        return [
            Fetched(p, s + i, r.key, r.value, r.headers, -1)
            for p, (s, e) in sorted(ranges.items())
            for i, r in enumerate(self.records(run.config, p, s, e))
        ]

    def describe(self) -> str:
        user = f" with user rows {self.rows.fn} ({self.rows.schema})" if self.rows else ""
        opts = f" options {dict(self.options)}" if self.options else ""
        return f"Spark's Kafka source over a topic the harness fills{user}{opts}"


def _ts(ms: int) -> Any:
    from datetime import datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC)
