"""Driving a Python streaming source's reader directly, without Spark.

:class:`SourceUnderTest` builds readers the way PySpark does
(``DataSource(options)``, then ``streamReader(schema)``, falling back to
``simpleStreamReader(schema)`` when ``streamReader`` is not implemented) and
:class:`Reader` offers one interface over both reader kinds: ``initial()``,
``latest(start, limit)`` (``latestOffset``; for a simple reader the end offset
``read(start)`` returns), ``rows(start, end)`` (``partitions`` + ``read`` of
every partition; for a simple reader ``readBetweenOffsets``) as a multiset of
normalised rows. No JVM runs, so a DDL schema string is parsed here for
atomic types (:func:`schema_arg`); nested types are passed as the string.
"""

from __future__ import annotations

import inspect
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeAlias

from pyspark.errors import PySparkNotImplementedError
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, SimpleDataSourceStreamReader

from scenarios.readlimits import ReadAllAvailable, ReadLimit, SupportsTriggerAvailableNow

#: A multiset of normalised rows.
Rows: TypeAlias = Counter[tuple[Any, ...]]


def freeze(value: Any) -> Any:
    """A hashable, comparable stand-in for one column value."""
    if isinstance(value, float) and math.isnan(value):
        return ("NaN",)
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def normalise(items: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """Rows of a ``read()`` result: tuples, ``Row``s or pyarrow ``RecordBatch``es."""
    for item in items:
        if hasattr(item, "to_pylist") and hasattr(item, "num_rows"):
            for d in item.to_pylist():
                yield tuple(freeze(v) for v in d.values())
        elif isinstance(item, tuple | list):
            yield tuple(freeze(v) for v in item)
        else:
            yield (freeze(item),)


def multiset(items: Iterable[Any]) -> Rows:
    return Counter(normalise(items))


def diff_rows(expected: Rows, actual: Rows, limit: int = 5) -> list[str]:
    """Human lines for the rows ``actual`` has too many / too few of, capped at ``limit`` each."""
    extra, missing = actual - expected, expected - actual
    lines = [f"{n}x extra {row}" for row, n in list(extra.items())[:limit]]
    lines += [f"{n}x missing {row}" for row, n in list(missing.items())[:limit]]
    more = max(0, len(extra) - limit) + max(0, len(missing) - limit)
    if more:
        lines.append(f"... and {more} more differing row(s)")
    return lines


_ATOMIC = {
    "int": "IntegerType",
    "integer": "IntegerType",
    "bigint": "LongType",
    "long": "LongType",
    "smallint": "ShortType",
    "short": "ShortType",
    "tinyint": "ByteType",
    "byte": "ByteType",
    "string": "StringType",
    "double": "DoubleType",
    "float": "FloatType",
    "real": "FloatType",
    "boolean": "BooleanType",
    "timestamp": "TimestampType",
    "timestamp_ntz": "TimestampNTZType",
    "date": "DateType",
    "binary": "BinaryType",
}


def schema_arg(schema: Any) -> Any:
    """What the reader gets as ``schema``: a ``StructType`` for a DDL string of
    ``name TYPE`` fields with atomic types (or ``DECIMAL(p,s)``), else unchanged."""
    if not isinstance(schema, str):
        return schema
    from pyspark.sql import types as T

    fields = []
    for part in [p.strip() for p in re.split(r",(?![^(]*\))", schema) if p.strip()]:
        m = re.fullmatch(r"`?(\w+)`?\s+(\w+)(?:\((\d+)\s*,\s*(\d+)\))?(\s+NOT\s+NULL)?", part, re.IGNORECASE)
        if not m:
            return schema
        name, type_name, p, s, not_null = m.groups()
        if type_name.lower() == "decimal":
            dtype: Any = T.DecimalType(int(p or 10), int(s or 0))
        elif type_name.lower() in _ATOMIC:
            dtype = getattr(T, _ATOMIC[type_name.lower()])()
        else:
            return schema
        fields.append(T.StructField(name, dtype, not not_null))
    return T.StructType(fields)


class Reader:
    """One reader instance (a "query run"): ``kind`` is ``stream`` or ``simple``."""

    def __init__(self, impl: DataSourceStreamReader | SimpleDataSourceStreamReader) -> None:
        self.impl = impl
        self.kind = "simple" if isinstance(impl, SimpleDataSourceStreamReader) else "stream"
        if self.kind == "stream" and not isinstance(impl, DataSourceStreamReader):
            # duck-typed reader without the base class: treat by its methods
            self.kind = "simple" if hasattr(impl, "readBetweenOffsets") else "stream"

    @property
    def stream(self) -> Any:
        """The reader as a stream reader (``kind == "stream"``): a ``DataSourceStreamReader`` or one duck-typed
        without the base class, whose ``latestOffset`` may be the old no-argument form."""
        return self.impl

    def initial(self) -> Any:
        return self.impl.initialOffset()

    def default_limit(self) -> ReadLimit:
        get = getattr(self.impl, "getDefaultReadLimit", None)
        return get() if callable(get) else ReadAllAvailable()

    def latest(self, start: Any, limit: ReadLimit | None = None) -> Any:
        """``latestOffset(start, limit)`` (old no-argument signature supported);
        for a simple reader, the end offset of ``read(start)``."""
        if self.kind == "simple":
            return self.simple_read(start)[1]
        method = self.stream.latestOffset
        if not inspect.signature(method).parameters:
            return method()
        return method(start, limit if limit is not None else ReadAllAvailable())

    def supports_available_now(self) -> bool:
        """Whether the reader implements ``SupportsTriggerAvailableNow`` (``prepareForTriggerAvailableNow``)."""
        return self.kind == "stream" and isinstance(self.impl, SupportsTriggerAvailableNow)

    def prepare_available_now(self) -> None:
        """``prepareForTriggerAvailableNow()``: what Spark calls when an ``availableNow`` query starts."""
        self.impl.prepareForTriggerAvailableNow()  # type: ignore[union-attr]

    def supports_limits(self) -> bool:
        """Whether ``latestOffset`` takes ``(start, limit)`` (PySpark >= 4.2 signature)."""
        return self.kind == "stream" and bool(inspect.signature(self.stream.latestOffset).parameters)

    def simple_read(self, start: Any) -> tuple[Rows, Any]:
        impl: Any = self.impl
        it, end = impl.read(start)
        return multiset(it), end

    def partitions(self, start: Any, end: Any) -> Sequence[Any]:
        return list(self.stream.partitions(start, end))

    def read_partition(self, partition: Any) -> Rows:
        return multiset(self.stream.read(partition))

    def raw_rows(self, start: Any, end: Any) -> list[Any]:
        """Every row of ``[start, end)`` as ``read()`` gives it (tuples, ``Row``s or dicts; a pyarrow
        ``RecordBatch`` is split into one dict per row), for building a DataFrame of the source's data."""
        if self.kind == "simple":
            impl: Any = self.impl
            items: Iterable[Any] = impl.readBetweenOffsets(start, end)
        else:
            items = (item for part in self.partitions(start, end) for item in self.stream.read(part))
        out: list[Any] = []
        for item in items:
            if hasattr(item, "to_pylist") and hasattr(item, "num_rows"):
                out.extend(item.to_pylist())
            else:
                out.append(item)
        return out

    def rows(self, start: Any, end: Any) -> Rows:
        """Every row of ``[start, end)`` as Spark would read it on a replay."""
        if self.kind == "simple":
            impl: Any = self.impl
            return multiset(impl.readBetweenOffsets(start, end))
        total: Rows = Counter()
        for part in self.partitions(start, end):
            total.update(self.read_partition(part))
        return total

    def stop(self) -> None:
        stop = getattr(self.impl, "stop", None)
        if callable(stop):
            try:
                stop()
            except Exception:  # best effort: a failing stop() is not what is being checked
                pass


class SourceUnderTest:
    """A ``DataSource`` class plus its options; :meth:`reader` makes a fresh reader."""

    def __init__(self, source_cls: type[DataSource], options: Mapping[str, str]) -> None:
        if not (isinstance(source_cls, type) and issubclass(source_cls, DataSource)):
            raise TypeError(f"{source_cls!r} is not a pyspark.sql.datasource.DataSource subclass")
        self.source_cls = source_cls
        self.options = {str(k): str(v) for k, v in options.items()}

    def datasource(self) -> DataSource:
        from pyspark.sql.datasource import CaseInsensitiveDict

        return self.source_cls(CaseInsensitiveDict(self.options))

    @property
    def name(self) -> str:
        try:
            return str(self.source_cls.name())
        except Exception:
            return self.source_cls.__name__

    def reader(self) -> Reader:
        ds = self.datasource()
        schema = schema_arg(ds.schema())
        try:
            return Reader(ds.streamReader(schema))
        except PySparkNotImplementedError:
            return Reader(ds.simpleStreamReader(schema))
