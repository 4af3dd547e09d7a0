"""Spark schemas as Arrow schemas with UTC timestamps, on every PySpark release."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.types import StructType


def utc_arrow_schema(schema: StructType) -> pa.Schema:
    """``schema`` as Arrow, timestamps in UTC (PySpark 4.2 renamed the keyword that says so)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(schema, timezone="UTC")
    except TypeError:  # PySpark before 4.2: its default, timestamp_utc=True, means the same
        return to_arrow_schema(schema)
