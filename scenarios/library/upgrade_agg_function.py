"""Upgrade: the windowed aggregation of ``agg_watermark_append`` redeployed with ``max`` in place of ``sum``.

Purpose: a change the programming guide does not allow ("Any change in number or type of grouping keys or
aggregates is not allowed") that Spark cannot see: ``max(value)`` keeps a state buffer of the same type as
``sum(value)`` (one ``bigint``), under the same output name, so the state schema checks pass and version 2
(:data:`V2`) resumes on version 1's partial sums. Guarantee checked: exactly-once by each version's own
semantics: a window emitted after the deploy must hold version 2's aggregate over all its rows. Expected:
violated, ``wrong-value`` rows in the windows open at the deploy (the maximum of a partial sum and later
values), each named with the deploy before it; windows that closed before the deploy hold version 1's sums.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from scenarios.library.agg_watermark_append import SCENARIO as AGG
from scenarios.library.agg_watermark_append import closed_windows_of, window_aggregate

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from scenarios.base import OracleContext


def aggregate_v2(df: DataFrame) -> DataFrame:
    """``agg_watermark_append``'s aggregation with ``max(value)`` as ``value_sum``: the same schema, other values."""
    return window_aggregate(df, value=F.max)


def closed_windows_v2(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    return closed_windows_of(aggregate_v2, batch_input, ctx)


SCENARIO = replace(
    AGG,
    name="upgrade_agg_function",
    summary="windowed count/sum -> file sink, redeployed with max for sum (expected: accepted, silently wrong)",
    guarantee="violated",
    upgrade_to="scenarios.library.upgrade_agg_function:V2",
)
#: Version 2: ``max`` where version 1 had ``sum``.
V2 = replace(
    SCENARIO, name="upgrade_agg_function_v2", transform=aggregate_v2, oracle=closed_windows_v2, upgrade_to=None
)
