"""``dropDuplicatesWithinWatermark`` into the parquet file sink.

Purpose: deduplication bounded by the watermark (Spark 3.5+): the first row of
a key is emitted and the key is kept in state until the watermark reaches the
row's event time plus the delay; later rows of the key are dropped meanwhile.
Dedup key: ``key``, ``bucket = value % 3`` and ``slot`` (start of the 10-s
window of ``event_time``); watermark ``withWatermark("event_time", 15 s)``.
Faults: as ``dedup_stream`` (planning, after ``offsets/N``, mid-batch in the
read stage, after ``commits/N``; no-data batches off).
Guarantee checked: exactly-once for what Spark guarantees: "events are
deduplicated as long as the time distance of earliest and latest events are
smaller than the delay threshold of watermark" (``dropDuplicatesWithinWatermark``
docs). All rows of one key lie in one 10-s slot, under the 15-s delay, so
every key is emitted exactly once, whatever the batch boundaries. (Keys whose
rows spread wider than the delay may be emitted again after their state
expired; which ones depends on batch boundaries, so they are kept out.)
Pass condition: the rows readable through the sink equal, as a multiset, the
distinct ``(key, bucket, slot)`` of exactly the input added (only the dedup
columns are output; see ``dedup_stream``).
Requirements: none; one source partition and jitter (3 s) below the delay, so
no row is behind the watermark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scenarios.base import Scenario
from scenarios.library.dedup_stream import DEDUP_KEY, distinct_keys, with_dedup_columns
from scenarios.presets import EVENT_TIME, STATEFUL_FILE_SINK

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

DELAY = "15 seconds"


def dedup_within_watermark(df: DataFrame) -> DataFrame:
    return (
        with_dedup_columns(df)
        .withWatermark("event_time", DELAY)
        .dropDuplicatesWithinWatermark(list(DEDUP_KEY))
        .select(*DEDUP_KEY)
    )


SCENARIO = Scenario(
    name="dedup_within_watermark",
    summary="dropDuplicatesWithinWatermark(key, value % 3, 10 s slot) -> parquet file sink (expected: exactly-once)",
    guarantee="exactly-once",
    transform=dedup_within_watermark,
    identity=DEDUP_KEY,
    oracle=distinct_keys,
    **EVENT_TIME,
    **STATEFUL_FILE_SINK,
)
