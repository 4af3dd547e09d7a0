"""Per-key sessions with ``transformWithStateInPandas`` (Spark 4's stateful API) into a ``foreachBatch`` SQLite sink.

Purpose: the Spark 4 arbitrary-state operator under kills. A :class:`SessionProcessor` keeps, per ``key``, a value
state (the open session: where it started, rows, sum, newest event time), a map state (rows per bucket
``value % 3``) and a list state (the last 3 values), and one event-time timer per key. For
every input row it emits a ``row`` record (the session so far); a session ends when a row of its key comes more
than ``GAP_MS`` after the session's newest event, or when the watermark passes that point (the timer), and then
a ``session`` record sums it up. A lost or twice-applied state update shows as wrong numbers in every later record
of the key, a lost timer as a missing ``session`` record.
Determinism: the source has one partition and event time jitter below the watermark delay (no row is ever late);
event times are truncated to whole seconds, so a watermark (a whole second) never equals a timer (a whole second
plus 1 ms), and Spark fires a timer once the batch's watermark is past it (``TimerStateImpl.getExpiredTimers``:
``timestamp < watermark``). Rows of a key are taken in offset order, within a batch too. Whether a session was
ended by its timer or by its next row, its ``session`` record is the same: once the watermark is past a session's
timer, every later row of the key is more than ``GAP_MS`` after it. No TTL: PySpark 4.3 refuses one in event-time
mode (measured, ``STATEFUL_PROCESSOR_INCORRECT_TIME_MODE_TO_ASSIGN_TTL``), and in processing-time mode timers and
expiry follow the clock, not the input (see docs/scenarios.md).
Faults: every crash point (no-data batches off, so each batch reads data); ``sink.step`` faults inside the
``foreachBatch`` function. The sink is :func:`scenarios.sinks.sqlite_upsert.upsert_into_sqlite` (batch-id ledger).
Guarantee checked: exactly-once: the table holds each record of the oracle once, with the oracle's values.
Pass condition: the rows equal, as a multiset, :func:`expected_records`, computed in plain Python over exactly
the input added and the offset log (the watermark of the run's last batch decides which trailing sessions their
timers ended).
Requirements: the RocksDB state store (Spark's only provider for ``transformWithState``); chaos draws it with and
without changelog checkpointing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql.streaming.stateful_processor import StatefulProcessor

from fault_injectors.plan import ALL_CRASH_POINTS
from fault_injectors.sinks import crash_injecting_foreach_batch
from scenarios.base import OracleContext, Scenario, SinkContext, StateExpectation
from scenarios.library.agg_watermark_append import last_batch_start
from scenarios.presets import NO_DATA_BATCHES_OFF
from scenarios.sinks.sqlite_upsert import read_sqlite, upsert_into_sqlite

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, StatefulProcessorHandle, TimerValues
    from pyspark.sql.types import StructType

#: A session ends when its key's next row is more than this after its newest event (event time, ms).
GAP_MS = 4_000
DELAY = "5 seconds"
DELAY_MS = 5_000
BUCKETS = 3
RECENT = 3
OUTPUT_DDL = (
    "kind STRING, key INT, partition INT, offset BIGINT, seq INT, rows BIGINT, total BIGINT, recent BIGINT, "
    "buckets STRING"
)
OUTPUT_COLUMNS = tuple(c.split()[0] for c in OUTPUT_DDL.split(", "))
IDENTITY = ("kind", "partition", "offset", "seq")
SESSION_DDL = "partition INT, offset BIGINT, seq INT, rows BIGINT, total BIGINT, last_ms BIGINT"


@dataclass
class Session:
    """An open session of one key: its first row's provenance, rows, sum and newest event time (ms)."""

    partition: int
    offset: int
    seq: int
    rows: int
    total: int
    last_ms: int

    @property
    def timer_ms(self) -> int:
        """When the session's timer is due: 1 ms past ``last_ms + GAP_MS`` (never a whole second)."""
        return self.last_ms + GAP_MS + 1


class Sessionizer:
    """The session logic over one key's rows in offset order, shared by the processor and the oracle; state
    lives in ``session``/``buckets``/``recent``, which the processor loads from and saves to Spark's state."""

    def __init__(self, session: Session | None, buckets: dict[int, int], recent: list[int]) -> None:
        self.session, self.buckets, self.recent = session, buckets, recent

    def _record(self, kind: str, key: int, at: tuple[int, int, int]) -> dict[str, Any]:
        s = self.session
        assert s is not None
        return {
            "kind": kind,
            "key": key,
            "partition": at[0],
            "offset": at[1],
            "seq": at[2],
            "rows": s.rows,
            "total": s.total,
            "recent": sum(self.recent),
            "buckets": "/".join(str(self.buckets.get(b, 0)) for b in range(BUCKETS)),
        }

    def close(self, key: int) -> dict[str, Any]:
        """The ``session`` record of the open session, which is then forgotten."""
        s = self.session
        assert s is not None
        record = self._record("session", key, (s.partition, s.offset, s.seq))
        self.session, self.buckets, self.recent = None, {}, []
        return record

    def add(self, key: int, partition: int, offset: int, seq: int, value: int, ts_ms: int) -> list[dict[str, Any]]:
        """Records for one row: the ended session's (if the row comes after the gap), then the row's."""
        out = []
        if self.session is not None and ts_ms > self.session.last_ms + GAP_MS:
            out.append(self.close(key))
        if self.session is None:
            self.session = Session(partition, offset, seq, 0, 0, ts_ms)
        s = self.session
        s.rows, s.total, s.last_ms = s.rows + 1, s.total + value, max(s.last_ms, ts_ms)
        self.buckets[value % BUCKETS] = self.buckets.get(value % BUCKETS, 0) + 1
        self.recent = [*self.recent, value][-RECENT:]
        out.append(self._record("row", key, (partition, offset, seq)))
        return out


def _pandas() -> Any:
    import pandas as pd

    return pd


class SessionProcessor(StatefulProcessor):
    """The ``StatefulProcessor``: :class:`Sessionizer` over Spark's value, map and list state and one event-time
    timer per key (at the open session's :attr:`Session.timer_ms`)."""

    #: ``transformWithStateInPandas``'s ``timeMode``.
    time_mode: str = "EventTime"
    #: State TTL (ms), or ``None``; PySpark 4.3 refuses a TTL in event-time mode (measured:
    #: ``STATEFUL_PROCESSOR_INCORRECT_TIME_MODE_TO_ASSIGN_TTL``), so only ``tws_sessions_ttl`` (processing time,
    #: no timers) sets one.
    ttl_ms: int | None = None
    #: Whether sessions also end by an event-time timer (event-time mode only).
    timers: bool = True

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.session_state = handle.getValueState("session", SESSION_DDL, self.ttl_ms)
        self.bucket_state = handle.getMapState("buckets", "bucket INT", "rows BIGINT", self.ttl_ms)
        self.recent_state = handle.getListState("recent", "value BIGINT", self.ttl_ms)

    # -- where the open session is kept (the broken twin keeps it elsewhere) --
    def load_session(self, key: int) -> Session | None:
        value = self.session_state.get() if self.session_state.exists() else None
        return None if value is None else Session(*value)

    def save_session(self, key: int, session: Session | None) -> None:
        if session is None:
            self.session_state.clear()
        else:
            self.session_state.update(
                (session.partition, session.offset, session.seq, session.rows, session.total, session.last_ms)
            )

    def _load(self, key: int) -> Sessionizer:
        buckets = {int(k[0]): int(v[0]) for k, v in self.bucket_state.iterator()} if self.bucket_state.exists() else {}
        recent = [int(v[0]) for v in self.recent_state.get()] if self.recent_state.exists() else []
        return Sessionizer(self.load_session(key), buckets, recent)

    def _save(self, key: int, state: Sessionizer, timer_before: int | None) -> None:
        self.save_session(key, state.session)
        self.bucket_state.clear()
        for bucket, rows in state.buckets.items():
            self.bucket_state.updateValue((bucket,), (rows,))
        self.recent_state.clear()
        if state.recent:
            self.recent_state.put([(v,) for v in state.recent])
        timer_after = state.session.timer_ms if state.session is not None else None
        if self.timers and timer_before != timer_after:
            if timer_before is not None:
                self.handle.deleteTimer(timer_before)
            if timer_after is not None:
                self.handle.registerTimer(timer_after)

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        pd = _pandas()
        k = int(key[0])
        batch = pd.concat(list(rows), ignore_index=True).sort_values(["partition", "offset", "seq"])
        state = self._load(k)
        before = state.session.timer_ms if state.session is not None else None
        out: list[dict[str, Any]] = []
        for r in batch.itertuples(index=False):
            out += state.add(k, int(r.partition), int(r.offset), int(r.seq), int(r.value), int(r.ts_ms))
        self._save(k, state, before)
        yield pd.DataFrame(out, columns=list(OUTPUT_COLUMNS))

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        pd = _pandas()
        k = int(key[0])
        state = self._load(k)
        out = [state.close(k)] if state.session is not None else []
        self._save(k, Sessionizer(None, {}, []), None)  # the session ended: nothing of it stays (Spark drops the timer)
        yield pd.DataFrame(out, columns=list(OUTPUT_COLUMNS))

    def close(self) -> None:
        pass


def with_event_seconds(df: DataFrame) -> DataFrame:
    """Adds ``ts`` (``event_time`` truncated to the second, the watermark column) and ``ts_ms`` (the same in ms)."""
    from pyspark.sql import functions as F

    return df.withColumn("ts", F.date_trunc("second", "event_time")).withColumn("ts_ms", F.unix_millis("ts"))


def sessions_with(processor: Callable[[], SessionProcessor]) -> Callable[[DataFrame], DataFrame]:
    """The transform: a ``processor()`` per ``key`` over rows with event seconds, watermark ``DELAY`` on ``ts``
    (``processor`` is called in the driver, when the query is defined)."""

    def transform(df: DataFrame) -> DataFrame:
        rows = (
            with_event_seconds(df)
            .withWatermark("ts", DELAY)
            .select("partition", "offset", "seq", "key", "value", "ts", "ts_ms")
        )
        p = processor()
        return rows.groupBy("key").transformWithStateInPandas(
            statefulProcessor=p, outputStructType=OUTPUT_DDL, outputMode="Append", timeMode=p.time_mode
        )

    return transform


def run_sessions(
    rows: Sequence[dict[str, Any]], watermark_ms: int | None
) -> tuple[list[dict[str, Any]], dict[int, Sessionizer]]:
    """The oracle's sessions, in plain Python: every key's rows in offset order through :class:`Sessionizer`, then
    the sessions still open whose timer the last batch's watermark had passed (``timer < watermark``) ended.
    Returns the records and each key's state at the end (what Spark's state must hold)."""
    out: list[dict[str, Any]] = []
    keys: dict[int, Sessionizer] = {}
    for r in sorted(rows, key=lambda r: (r["partition"], r["offset"], r["seq"])):
        state = keys.setdefault(r["key"], Sessionizer(None, {}, []))
        out += state.add(r["key"], r["partition"], r["offset"], r["seq"], r["value"], r["ts_ms"])
    for key, state in sorted(keys.items()):
        if state.session is not None and watermark_ms is not None and state.session.timer_ms < watermark_ms:
            out.append(state.close(key))
    return out, keys


def expected_records(rows: Sequence[dict[str, Any]], watermark_ms: int | None) -> list[dict[str, Any]]:
    """The records of :func:`run_sessions`."""
    return run_sessions(rows, watermark_ms)[0]


def final_state_rows(rows: Sequence[dict[str, Any]], watermark_ms: int | None, variable: str) -> list[tuple[Any, ...]]:
    """What Spark's state variable ``variable`` (``session``, ``buckets`` or ``recent``) must hold at the end, as
    the ``statestore`` reader flattens it: ``(key, *value)`` per open session, ``(key, bucket, rows)`` per bucket,
    ``(key, value)`` per list element. An ended session leaves nothing."""
    out: list[tuple[Any, ...]] = []
    for key, state in sorted(run_sessions(rows, watermark_ms)[1].items()):
        s = state.session
        if s is None:
            continue
        if variable == "session":
            out.append((key, s.partition, s.offset, s.seq, s.rows, s.total, s.last_ms))
        elif variable == "buckets":
            out += [(key, bucket, n) for bucket, n in sorted(state.buckets.items())]
        else:
            out += [(key, v) for v in state.recent]
    return out


def last_batch_watermark(rows: Sequence[dict[str, Any]], checkpoint: str) -> int | None:
    """The watermark (ms) of the run's newest committed batch: the newest event second of the input before that
    batch's start offsets, minus ``DELAY_MS``; ``None`` without an earlier batch (no timer can have fired)."""
    start = last_batch_start(checkpoint)
    if not start:
        return None
    before = [r["ts_ms"] for r in rows if r["offset"] < start.get(r["partition"], 0)]
    return max(before) - DELAY_MS if before else None


def input_rows(batch_input: DataFrame) -> list[dict[str, Any]]:
    """The input as plain dicts with ``ts_ms`` (event seconds), for the oracles."""
    columns = ("partition", "offset", "seq", "key", "value", "ts_ms")
    return [r.asDict() for r in with_event_seconds(batch_input).select(*columns).collect()]


def oracle(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    rows = input_rows(batch_input)
    records = expected_records(rows, last_batch_watermark(rows, ctx.checkpoint))
    return ctx.spark.createDataFrame(records, OUTPUT_DDL)


#: The reader's flattened columns of each state variable.
STATE_DDL = {
    "session": "key INT, " + SESSION_DDL,
    "buckets": "key INT, bucket INT, rows BIGINT",
    "recent": "key INT, value BIGINT",
}


def expected_state(variable: str) -> Callable[[DataFrame, OracleContext], DataFrame]:
    """The final-state oracle of ``variable`` (:func:`final_state_rows` over the input and the offset log)."""

    def expected(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
        rows = input_rows(batch_input)
        state = final_state_rows(rows, last_batch_watermark(rows, ctx.checkpoint), variable)
        return ctx.spark.createDataFrame(state, STATE_DDL[variable])

    return expected


#: Spark's value, map and list state after the run, against the oracle's sessions (timers: the reader cannot
#: read them, measured).
FINAL_STATE = tuple(StateExpectation(name, expected_state(name)) for name in STATE_DDL)


def database(ctx: SinkContext) -> str:
    return f"{ctx.output}/sink.sqlite3"


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.outputMode("append").foreachBatch(
        crash_injecting_foreach_batch(upsert_into_sqlite(database(ctx)), ctx.faults)
    )


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame(read_sqlite(database(ctx)), schema)


#: Settings the scenario and its broken twin share.
SESSIONS: dict[str, Any] = {
    "kill_points": ALL_CRASH_POINTS,
    "sink_steps": True,
    "attach_sink": attach_sink,
    "read_output": read_output,
    "identity": IDENTITY,
    "stateful": True,
    "state_stores": ("rocksdb", "rocksdb-changelog"),
    "partitions": 1,
    "rows_per_offset": 2,
    "max_rows_per_batch": 20,
    "rows_per_round": (20, 40),
    # 16 keys, skewed: common keys run long sessions, rare ones go quiet long enough for their timers to end them
    # (about 6 timer ends and 37 sessions in 60 offsets, by the model in tests/unit/test_tws_sessions.py).
    "source_overrides": {"num_keys": 16, "key_skew": 1.0, "event_time_step_ms": 1_000, "disorder_ms": 3_000},
    "confs": {
        **NO_DATA_BATCHES_OFF,
        "spark.sql.streaming.stateStore.providerClass": (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        ),
    },
}

SCENARIO = Scenario(
    name="tws_sessions",
    summary="transformWithStateInPandas sessions (value/map/list state, event-time timers) -> foreachBatch "
    "SQLite (expected: exactly-once)",
    guarantee="exactly-once",
    transform=sessions_with(SessionProcessor),
    oracle=oracle,
    final_state=FINAL_STATE,
    **SESSIONS,
)
