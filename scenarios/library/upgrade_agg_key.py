"""Upgrade: the windowed aggregation of ``agg_watermark_append`` redeployed with one more grouping key.

Purpose: a change the programming guide does not allow ("Streaming aggregation: ... Any change in number or type
of grouping keys or aggregates is not allowed"), which Spark 4 refuses when the restarted query loads its state:
version 2 (:data:`V2`) groups by window, ``key`` and ``key % 2`` (``parity``), so the state store's key schema
gains a column. Guarantee checked: none survives the deploy: the run's verdict is ``upgrade-refused``, with
Spark's error class (``STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE``) and the guide's row. Version 1 alone is
``agg_watermark_append``, exactly-once.
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
    """``agg_watermark_append``'s aggregation grouped by ``parity`` (``key % 2``) as well."""
    return window_aggregate(df, {"parity": F.col("key") % 2})


def closed_windows_v2(batch_input: DataFrame, ctx: OracleContext) -> DataFrame:
    return closed_windows_of(aggregate_v2, batch_input, ctx)


SCENARIO = replace(
    AGG,
    name="upgrade_agg_key",
    summary="windowed count/sum -> file sink, redeployed grouping by one more key (expected: upgrade-refused)",
    guarantee="upgrade-refused",
    upgrade_to="scenarios.library.upgrade_agg_key:V2",
)
#: Version 2: one more grouping key.
V2 = replace(SCENARIO, name="upgrade_agg_key_v2", transform=aggregate_v2, oracle=closed_windows_v2, upgrade_to=None)
