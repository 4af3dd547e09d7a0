"""Publishing a run's input as files, for Spark's own file source (JSON, CSV, parquet).

The tap says how many offset units each partition has available; :func:`publish` writes what the
directory does not hold yet as **one file per partition and range**, named
``p<partition>-<start>-<end>.<ext>`` (zero-padded, offsets ``[start, end)``), each written under a
hidden name (``.``-prefixed: Spark's file source skips those) and renamed into place, so a query
never lists a half-written file. Names are a function of the range, so publishing again after a
driver was killed mid-way rewrites nothing and adds only the missing files: the directory's
content is a pure function of the tap. :func:`parse_name` maps a file back to its range, which is
how an anomaly of a file-source run is located in the batch whose file-source log listed the file.

Every row carries the provenance columns ``partition, offset, seq`` first.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scenarios.admission import Offsets
from scenarios.rowgen import ConfigError, SourceConfig
from scenarios.tap import read_tap
from scenarios.userrows import Rows, as_record, json_value, source_rows

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

FORMATS = {"json": "json", "csv": "csv", "parquet": "parquet"}
_NAME = re.compile(r"^p(\d+)-(\d+)-(\d+)\.(json|csv|parquet)$")


def file_name(partition: int, start: int, end: int, fmt: str) -> str:
    return f"p{partition:04d}-{start:012d}-{end:012d}.{FORMATS[fmt]}"


def parse_name(name: str) -> tuple[int, int, int] | None:
    """``(partition, start, end)`` of a published file's name (a path or URI is fine); ``None`` otherwise."""
    m = _NAME.match(name.rstrip("/").rsplit("/", 1)[-1])
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def published_ends(directory: str | os.PathLike[str]) -> Offsets:
    """Per partition, the end offset of the data already published in ``directory``."""
    ends: Offsets = {}
    d = Path(directory)
    if d.is_dir():
        for entry in d.iterdir():
            parsed = parse_name(entry.name)
            if parsed is not None:
                p, _, end = parsed
                ends[p] = max(ends.get(p, 0), end)
    return ends


def _records(
    config: SourceConfig, rows: Rows | None, schema: StructType, partition: int, start: int, end: int
) -> Iterator[dict[str, Any]]:
    for row in source_rows(config, rows, schema, partition, start, end):
        yield as_record(row, schema, f"row (partition={partition}, offset={row[1]}, seq={row[2]})")


def _encode(fmt: str, records: list[dict[str, Any]], schema: StructType) -> bytes:
    if fmt == "json":
        return "".join(json.dumps(json_value(r), sort_keys=False) + "\n" for r in records).encode()
    if fmt == "csv":
        from pyspark.sql.types import ArrayType, MapType, StructType

        nested = [f.name for f in schema.fields if isinstance(f.dataType, StructType | ArrayType | MapType)]
        if nested:
            raise ConfigError(
                f"file source csv: column(s) {nested} are nested, which CSV cannot hold; use json or parquet"
            )
        buf = io.StringIO()
        out = csv.writer(buf, lineterminator="\n")
        out.writerow([f.name for f in schema.fields])
        out.writerows([json_value(r[f.name]) for f in schema.fields] for r in records)
        return buf.getvalue().encode()
    import pyarrow as pa
    import pyarrow.parquet as pq

    from scenarios.arrowschema import utc_arrow_schema

    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(records, schema=utc_arrow_schema(schema)), sink)
    return bytes(sink.getvalue().to_pybytes())


def stage(
    directory: str | os.PathLike[str],
    partition: int,
    start: int,
    end: int,
    fmt: str,
    config: SourceConfig,
    rows: Rows | None,
    schema: StructType,
) -> Path:
    """Write the file of ``partition``'s offsets ``[start, end)`` into ``directory`` under a hidden name, fsynced;
    its path (:func:`file_name` is where it goes: rename it into place)."""
    if fmt not in FORMATS:
        raise ConfigError(f"file source: format {fmt!r} is not one of {sorted(FORMATS)}")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    data = _encode(fmt, list(_records(config, rows, schema, partition, start, end)), schema)
    tmp = d / f".{file_name(partition, start, end, fmt)}.{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return tmp


def publish(
    directory: str | os.PathLike[str],
    tap: str | os.PathLike[str],
    fmt: str,
    config: SourceConfig,
    rows: Rows | None,
    schema: StructType,
) -> list[str]:
    """Write the files for what the tap has available and ``directory`` lacks; returns their names.
    Each file is written under a hidden name, fsynced and renamed into place."""
    if fmt not in FORMATS:
        raise ConfigError(f"file source: format {fmt!r} is not one of {sorted(FORMATS)}")
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    done = published_ends(d)
    written = []
    for partition, end in sorted(read_tap(tap).items()):
        start = done.get(partition, 0)
        if end <= start:
            continue
        tmp = stage(d, partition, start, end, fmt, config, rows, schema)
        name = file_name(partition, start, end, fmt)
        os.replace(tmp, d / name)
        written.append(name)
    return written
