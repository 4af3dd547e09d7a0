"""``dropDuplicates`` with a watermark into the parquet file sink.

Purpose: streaming deduplication keeps every key it has seen in state (evicted
once the watermark passes the key's event-time column), so a crash that lost
or replayed dedup state would show as a missing or a repeated key. Dedup key:
``key``, ``bucket = value % 3`` (a derived column with many collisions) and
``slot``, the start of the row's 10-second event-time window, which carries the
watermark (``withWatermark("slot", 20 s)``): about 20 input rows share a slot,
so duplicates arrive both within a batch and in later batches.
Faults: SIGKILL while planning (``source.latest_offset``), after ``offsets/N``,
in the middle of batch N (``source.read``, ``sink.write.*``: the read stage
before the shuffle) and after ``commits/N``; no-data batches off, as in
``agg_watermark_append`` (and why).
Guarantee checked: exactly-once: each distinct ``(key, bucket, slot)`` of the
input is visible exactly once.
Pass condition: the rows readable through the sink equal, as a multiset, the
distinct ``(key, bucket, slot)`` of exactly the input added. Only the dedup
columns are output: ``dropDuplicates`` keeps the *first row in processing
order* of each key, which a batch query does not define the same way, so the
other columns of the kept row are not a function of the input.
Requirements: none. One source partition and a 20-s delay: a slot never goes
back more than one slot (10 s) behind the newest slot seen (jitter 3 s), so no
row is ever behind the watermark (Spark would drop it; which rows depends on
batch boundaries).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.base import OracleContext, Scenario
from scenarios.presets import EVENT_TIME, STATEFUL_FILE_SINK

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: The dedup key and the only output columns.
DEDUP_KEY = ("key", "bucket", "slot")
BUCKETS = 3
SLOT = "10 seconds"


def with_dedup_columns(df: DataFrame) -> DataFrame:
    """Adds ``bucket`` (``value % 3``) and ``slot`` (start of the 10-s window of ``event_time``)."""
    return df.withColumn("bucket", (F.col("value") % BUCKETS).cast("int")).withColumn(
        "slot", F.window("event_time", SLOT).start
    )


def dedup(df: DataFrame) -> DataFrame:
    return with_dedup_columns(df).withWatermark("slot", "20 seconds").dropDuplicates(list(DEDUP_KEY)).select(*DEDUP_KEY)


def distinct_keys(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    """Each dedup key of the input once. ``dropDuplicates`` emits a key the
    first time it arrives and drops later rows with the same key while the key
    is in state; a key leaves state only once ``slot <= watermark``, and then
    any later row of it is behind the watermark and dropped as late too."""
    return with_dedup_columns(batch_input).select(*DEDUP_KEY).distinct()


SCENARIO = Scenario(
    name="dedup_stream",
    summary="dropDuplicates(key, value % 3, 10 s slot) with watermark -> parquet file sink (expected: exactly-once)",
    guarantee="exactly-once",
    transform=dedup,
    identity=DEDUP_KEY,
    oracle=distinct_keys,
    **EVENT_TIME,
    **STATEFUL_FILE_SINK,
)
