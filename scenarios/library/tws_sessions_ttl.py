"""``tws_sessions`` in processing-time mode with a state TTL: Spark's TTL bookkeeping under kills.

Purpose: PySpark 4.3 accepts a state TTL only in processing-time mode (event-time mode refuses it: measured,
``STATEFUL_PROCESSOR_INCORRECT_TIME_MODE_TO_ASSIGN_TTL``). With a TTL every state variable keeps an expiry per
entry and a TTL index beside it (more RocksDB column families), which a replay must roll back with the rest. Here
the value, map and list state all have a 1-hour TTL, so nothing expires within a run, and there are no timers:
both would follow the clock, and no oracle over the input can predict the clock. Sessions end only by their
key's next row coming more than 4 s after them.
Faults: as ``tws_sessions``.
Guarantee checked: exactly-once: the table holds each record of the oracle once, with the oracle's values.
Pass condition: the rows equal, as a multiset, ``tws_sessions``'s records without timer ends.
Requirements: the RocksDB state store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scenarios.base import OracleContext, Scenario
from scenarios.library.tws_sessions import (
    OUTPUT_DDL,
    SESSIONS,
    SessionProcessor,
    expected_records,
    input_rows,
    sessions_with,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Long enough never to expire within a run: TTL runs on processing time, not on the input.
TTL_MS = 3_600_000


class TtlSessionProcessor(SessionProcessor):
    """:class:`SessionProcessor` in processing-time mode, every state variable with a ``TTL_MS`` TTL, no timers."""

    time_mode = "ProcessingTime"
    ttl_ms = TTL_MS
    timers = False


def oracle(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    return ctx.spark.createDataFrame(expected_records(input_rows(batch_input), None), OUTPUT_DDL)


SCENARIO = Scenario(
    name="tws_sessions_ttl",
    summary="tws_sessions in processing-time mode, state with a TTL, no timers -> foreachBatch SQLite "
    "(expected: exactly-once)",
    guarantee="exactly-once",
    transform=sessions_with(TtlSessionProcessor),
    oracle=oracle,
    **SESSIONS,
)
