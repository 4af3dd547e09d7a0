"""Spark schema to SQL columns and row values to SQL parameters, for the
``foreachBatch`` upsert sinks (SQLite and PostgreSQL).

Timestamps: PySpark hands ``TimestampType`` values to Python as naive
datetimes in the local time zone; they are stored as UTC instants
(PostgreSQL ``timestamptz``; SQLite ISO-8601 text with ``+00:00``) and read
back timezone-aware, so the instant survives any time zone setting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

#: The column every upsert sink adds to its data table: which batch wrote the row.
BATCH_COLUMN = "_batch_id"

_SQLITE: dict[type[DataType], str] = {
    BooleanType: "BOOLEAN",
    ByteType: "INTEGER",
    ShortType: "INTEGER",
    IntegerType: "INTEGER",
    LongType: "INTEGER",
    FloatType: "REAL",
    DoubleType: "REAL",
    StringType: "TEXT",
    BinaryType: "BLOB",
    DateType: "DATE",
    TimestampType: "TIMESTAMPTZ",
    TimestampNTZType: "TIMESTAMP",
    DecimalType: "DECIMAL_TEXT",  # TEXT affinity: SQLite would turn "12.50" into the REAL 12.5
}

_POSTGRES: dict[type[DataType], str] = {
    BooleanType: "boolean",
    ByteType: "smallint",
    ShortType: "smallint",
    IntegerType: "integer",
    LongType: "bigint",
    FloatType: "real",
    DoubleType: "double precision",
    StringType: "text",
    BinaryType: "bytea",
    DateType: "date",
    TimestampType: "timestamptz",
    TimestampNTZType: "timestamp",
}


def column_types(schema: StructType, dialect: str) -> list[tuple[str, str]]:
    """``(column name, SQL type)`` per field of ``schema`` for ``dialect``
    (``"sqlite"`` or ``"postgres"``); ``ValueError`` names an unsupported field."""
    table = _SQLITE if dialect == "sqlite" else _POSTGRES
    out = []
    for f in schema.fields:
        if f.name == BATCH_COLUMN:
            raise ValueError(f"column {BATCH_COLUMN!r} is reserved by the upsert sink; rename it in the query")
        dt = f.dataType
        if dialect == "postgres" and isinstance(dt, DecimalType):
            out.append((f.name, f"numeric({dt.precision},{dt.scale})"))
        elif type(dt) in table:
            out.append((f.name, table[type(dt)]))
        else:
            raise ValueError(
                f"{dialect} upsert sink: column {f.name!r} has type {dt.simpleString()}, which this reference sink "
                f"does not map; supported: {', '.join(sorted(t.typeName() for t in table))}; cast it in the query"
            )
    return out


def _utc(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.astimezone(UTC)
    return value


def encode_row(row: Sequence[Any], schema: StructType, dialect: str) -> tuple[Any, ...]:
    """SQL parameters for one Spark ``Row`` (positional, in ``schema`` order)."""
    values = []
    for f, v in zip(schema.fields, row, strict=True):
        if v is not None and isinstance(f.dataType, TimestampType):
            v = _utc(v)
        if dialect == "sqlite" and v is not None:
            if isinstance(v, datetime | date):
                v = v.isoformat()
            elif isinstance(v, Decimal):
                v = str(v)
        values.append(v)
    return tuple(values)


_SQLITE_DECODE: dict[str, Callable[[Any], Any]] = {
    "BOOLEAN": bool,
    "DATE": date.fromisoformat,
    "TIMESTAMPTZ": datetime.fromisoformat,
    "TIMESTAMP": datetime.fromisoformat,
    "DECIMAL_TEXT": Decimal,
}


def decode_sqlite(value: Any, declared: str) -> Any:
    """Inverse of :func:`encode_row` for a SQLite column of declared type ``declared``."""
    if value is None:
        return None
    decode = _SQLITE_DECODE.get(declared.upper())
    return decode(value) if decode else value


def run_without_writing(batch_df: Any) -> None:
    """Execute a ``foreachBatch`` DataFrame's plan and discard its rows.

    For a replayed batch the upsert sinks write nothing, but the plan must
    still run: Spark 4 checks that every state store of a stateful query
    committed in each batch and otherwise fails the query
    (``STATE_STORE_COMMIT_VALIDATION_FAILED``, SPARK-52008), so returning early
    would stop a stateful query for good (each restart replays the same batch)."""
    batch_df.write.format("noop").mode("overwrite").save()
