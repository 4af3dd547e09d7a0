"""A user's own columns for the harness's inputs: a DDL schema and a pure row function.

:class:`Rows` names them; the replayable source and the file-directory source put the provenance
columns (``partition, offset, seq``) first in every row and the user's columns after them, so every
row stays traceable to the offset that produced it while the user's transform may drop them.

The row function is called as ``fn(seed, partition, offset, seq)`` and must be pure (no clock, no
global random state, no ``hash()`` of strings): the oracle and every replay call it again and must
get the same row. It returns the user's columns as a tuple (schema order) or a dict (by name); a
struct column's value is a tuple or a dict the same way, an array a list, a map a dict.

This module imports no Spark at module level: converting values needs only ``pyspark.sql.types``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any

from scenarios.rowgen import PROVENANCE, ConfigError, SourceConfig

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

#: DDL of the provenance columns that precede a user's columns.
PROVENANCE_DDL = "partition INT, offset BIGINT, seq INT"

RowFn = Callable[[int, int, int, int], "Sequence[Any] | Mapping[str, Any]"]


def function_ref(fn: str | Callable[..., Any], what: str) -> str:
    """``fn`` as ``"module:qualified.name"``, refusing what Spark's Python workers could not import by name."""
    if isinstance(fn, str):
        module, _, name = fn.partition(":")
        if not module or not name:
            raise ConfigError(f"{what}: {fn!r} must name a function as 'package.module:function'")
        return fn
    defined_in, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not defined_in or not name or "<locals>" in name or "<lambda>" in name or defined_in == "__main__":
        raise ConfigError(
            f"{what}: {fn!r} cannot be imported by name in Spark's Python workers; "
            "define it at module level in an importable module (not a lambda, a closure or __main__)"
        )
    return f"{defined_in}:{name}"


@cache
def resolve(ref: str) -> RowFn:
    """The function named ``"module:qualified.name"``; :class:`ConfigError` says what is missing."""
    module, _, name = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"row function {ref!r} cannot be loaded: {exc}") from None
    if not callable(obj):
        raise ConfigError(f"row function {ref!r} is a {type(obj).__name__}, not a function")
    fn: RowFn = obj
    return fn


_NAME = re.compile(r"\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\s")


def top_level_names(ddl: str) -> list[str]:
    """The top-level column names of a DDL schema (``"a INT, b STRUCT<c: INT, d: STRING>"`` -> ``[a, b]``)."""
    names, depth, start = [], 0, 0
    for i, ch in enumerate(ddl + ","):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            m = _NAME.match(ddl[start:i] + " ")
            if m is None:
                raise ConfigError(f"user schema {ddl!r}: cannot read a column name in {ddl[start:i].strip()!r}")
            names.append(m.group(1))
            start = i + 1
    return names


@dataclass(frozen=True)
class Rows:
    """A user's columns: ``schema`` (Spark DDL of the user's columns only) and ``fn`` (a row function,
    as a module-level callable or ``"module:function"``; stored as the reference)."""

    schema: str
    fn: str

    def __init__(self, schema: str, fn: str | Callable[..., Any]) -> None:
        if not schema.strip():
            raise ConfigError("user rows: the schema is empty; give the DDL of your columns, e.g. 'id STRING, n INT'")
        clash = sorted(n for n in top_level_names(schema) if n.lower() in PROVENANCE)  # Spark ignores case
        if clash:
            raise ConfigError(
                f"user rows: column(s) {clash} of schema {schema!r} clash with the provenance columns "
                f"{list(PROVENANCE)} the harness puts first in every row; rename them"
            )
        object.__setattr__(self, "schema", schema.strip())
        object.__setattr__(self, "fn", function_ref(fn, "user rows"))

    @property
    def ddl(self) -> str:
        """The whole row's DDL: provenance columns, then the user's."""
        return f"{PROVENANCE_DDL}, {self.schema}"

    def row(self, seed: int, partition: int, offset: int, seq: int) -> Sequence[Any] | Mapping[str, Any]:
        """The user's columns of one row (not converted); an exception of the function names the row."""
        fn = resolve(self.fn)
        try:
            return fn(seed, partition, offset, seq)
        except Exception as exc:
            raise ConfigError(
                f"row function {self.fn} raised {exc!r} at (seed={seed}, partition={partition}, offset={offset}, "
                f"seq={seq}); it must return your columns for every position"
            ) from exc


def as_tuple(value: Any, schema: StructType, where: str = "row") -> tuple[Any, ...]:
    """``value`` (tuple or dict) as a tuple in ``schema``'s field order, structs nested likewise."""
    fields = schema.fields
    if isinstance(value, Mapping):
        unknown = set(value) - {f.name for f in fields}
        if unknown:
            raise ConfigError(f"{where}: key(s) {sorted(unknown)} are not columns of {schema.simpleString()}")
        items = [value.get(f.name) for f in fields]
    elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if len(value) != len(fields):
            raise ConfigError(
                f"{where}: {len(value)} value(s) for the {len(fields)} column(s) of {schema.simpleString()}"
            )
        items = list(value)
    else:
        raise ConfigError(f"{where}: a {type(value).__name__} is not a row of {schema.simpleString()}")
    return tuple(_convert(v, f.dataType, f"{where}.{f.name}", as_tuple) for v, f in zip(items, fields, strict=True))


def as_record(value: Any, schema: StructType, where: str = "row") -> dict[str, Any]:
    """``value`` (tuple or dict) as a dict by column name, structs nested likewise (for JSON and parquet)."""
    values = as_tuple(value, schema, where)
    return {
        f.name: _convert(v, f.dataType, f"{where}.{f.name}", as_record)
        for v, f in zip(values, schema.fields, strict=True)
    }


def _convert(value: Any, dtype: DataType, where: str, struct: Callable[..., Any]) -> Any:
    from pyspark.sql.types import ArrayType, MapType, StructType

    if value is None:
        return None
    if isinstance(dtype, StructType):
        return struct(value, dtype, where)
    if isinstance(dtype, ArrayType):
        return [_convert(v, dtype.elementType, f"{where}[]", struct) for v in value]
    if isinstance(dtype, MapType):
        return {k: _convert(v, dtype.valueType, f"{where}{{}}", struct) for k, v in value.items()}
    return value


def json_value(value: Any) -> Any:
    """A row value as JSON: timestamps and dates in ISO 8601 (what Spark's JSON and CSV readers parse)."""
    if isinstance(value, datetime):
        return value.isoformat(timespec="microseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value


def source_rows(
    config: SourceConfig, rows: Rows | None, schema: StructType, partition: int, start: int, end: int
) -> Iterator[tuple[Any, ...]]:
    """Rows of offsets ``[start, end)`` of one partition as tuples in ``schema``'s order: the replayable
    source's own 6 columns, or the provenance columns followed by the user's columns (converted, so a
    dict or a struct given as a dict lands in the right place; a mistake names the row)."""
    if rows is None:
        yield from config.rows(partition, start, end)
        return
    from pyspark.sql.types import StructType as Struct

    user = Struct(schema.fields[len(PROVENANCE) :])
    for offset in range(start, end):
        for seq in range(config.rows_per_offset):
            where = f"row function {rows.fn} at (partition={partition}, offset={offset}, seq={seq})"
            yield (partition, offset, seq, *as_tuple(rows.row(config.seed, partition, offset, seq), user, where))
