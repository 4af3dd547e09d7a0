"""Upgrade: the stream-stream join of ``stream_stream_join`` redeployed with a wider time range.

Purpose: the one change the programming guide calls ill-defined ("Changes in join type (outer or inner) are not
allowed. Other changes in the join condition are ill-defined."): version 2 (:data:`V2`) joins rows up to 30 s
apart where version 1 joined rows up to 5 s apart. The state's schema does not change, so Spark resumes; what the
guide leaves open is what the join owes rows on both sides of the deploy. Guarantee checked: exactly-once by each
version's semantics: the pairs version 1 emitted before the deploy, then every pair version 2's condition matches
over all the input that version 1 had not emitted. Expected (measured): violated, ``lost`` pairs whose earlier row
version 1 had already evicted from its state (its watermark and its narrower range let it drop rows the wider
range still needed), each named at the deploy.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.library.stream_stream_join import PAIR, side
from scenarios.library.stream_stream_join import SCENARIO as JOIN

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from scenarios.base import OracleContext

WIDER = "l_key = r_key AND r_time BETWEEN l_time - INTERVAL 30 SECONDS AND l_time + INTERVAL 30 SECONDS"


def join_v2(df: DataFrame) -> DataFrame:
    """``stream_stream_join``'s join with the time range widened from 5 s to 30 s."""
    return (
        side(df, 0, "l")
        .join(side(df, 1, "r"), F.expr(WIDER), "inner")
        .select(F.col("l_key").alias("key"), *PAIR, "l_time", "r_time", "l_value", "r_value")
    )


def pairs_v2(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    """:func:`join_v2` over all the input, less the pairs of two rows that both ran before the deploy (version 2
    never sees such a pair: a join matches a new row against the state)."""
    pairs = join_v2(batch_input)
    if not ctx.before_deploy:
        return pairs
    left, right = ctx.before_deploy.get(0, 0), ctx.before_deploy.get(1, 0)
    return pairs.where(~((F.col("l_offset") < left) & (F.col("r_offset") < right)))


SCENARIO = replace(
    JOIN,
    name="upgrade_join_condition",
    summary="stream-stream join -> file sink, redeployed with a wider time range (guide: ill-defined)",
    guarantee="violated",
    upgrade_to="scenarios.library.upgrade_join_condition:V2",
)
#: Version 2: the time range widened.
V2 = replace(SCENARIO, name="upgrade_join_condition_v2", transform=join_v2, oracle=pairs_v2, upgrade_to=None)
