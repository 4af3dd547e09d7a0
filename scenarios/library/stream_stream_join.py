"""Inner stream-stream join with watermarks on both sides into the parquet file sink.

Purpose: the symmetric hash join keeps both sides' rows in state and emits a
match as soon as its second row arrives; state is evicted by the watermark and
the time-range condition. Left = rows of source partition 0, right = rows of
partition 1 of the same replayable source, each with ``withWatermark(.., 10 s)``;
joined on ``key`` and ``r_time BETWEEN l_time - 5 s AND l_time + 5 s``.
Faults: SIGKILL while planning (``source.latest_offset``), after ``offsets/N``,
in the middle of batch N (``source.read``, ``sink.write.*``: the read stage
before the shuffle; the source is scanned once per side) and after
``commits/N``; no-data batches off, as in ``agg_watermark_append`` (and why).
Guarantee checked: exactly-once: every matching (left row, right row) pair of
the input is visible exactly once.
Pass condition: the rows readable through the sink equal, as a multiset, the
same join in batch mode over exactly the input added. Spark guarantees an
inner join never drops a row less delayed than the watermark delay
("Semantic Guarantees of Stream-stream Inner Joins with Watermarking"), so all
matches are emitted by the end; none is held back (only outer joins wait).
Requirements: none. The two partitions may advance unevenly (each round adds a
different amount per partition), but the query's watermark is the *minimum*
of the two sides' (``spark.sql.streaming.multipleWatermarkPolicy=min``, the
default), and each side is in event-time order up to a 2-s jitter, below the
10-s delay, so no row is ever behind the watermark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.base import Scenario
from scenarios.presets import STATEFUL_FILE_SINK

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

DELAY = "10 seconds"
#: Output columns that identify a joined row: the provenance of both input rows.
PAIR = ("l_offset", "l_seq", "r_offset", "r_seq")
CONDITION = "l_key = r_key AND r_time BETWEEN l_time - INTERVAL 5 SECONDS AND l_time + INTERVAL 5 SECONDS"


def side(df: DataFrame, partition: int, prefix: str) -> DataFrame:
    """Rows of one source partition, columns prefixed, with a watermark on ``<prefix>_time``."""
    cols = {"key": "key", "offset": "offset", "seq": "seq", "value": "value", "time": "event_time"}
    return (
        df.where(F.col("partition") == partition)
        .select(*(F.col(src).alias(f"{prefix}_{dst}") for dst, src in cols.items()))
        .withWatermark(f"{prefix}_time", DELAY)
    )


def join(df: DataFrame) -> DataFrame:
    """Inner join of partition 0 (``l_*``) with partition 1 (``r_*``); the same in batch mode."""
    return (
        side(df, 0, "l")
        .join(side(df, 1, "r"), F.expr(CONDITION), "inner")
        .select(F.col("l_key").alias("key"), *PAIR, "l_time", "r_time", "l_value", "r_value")
    )


SCENARIO = Scenario(
    name="stream_stream_join",
    summary="inner join p0 x p1 on key, |dt| <= 5 s, watermarks -> parquet file sink (expected: exactly-once)",
    guarantee="exactly-once",
    transform=join,
    partitions=2,
    rows_per_offset=1,
    max_rows_per_batch=20,
    rows_per_round=(15, 30),
    identity=PAIR,
    source_overrides={"num_keys": 6, "event_time_step_ms": 1_000, "disorder_ms": 2_000},
    **STATEFUL_FILE_SINK,
)
