"""Correct, and unusual: a source whose partitions appear over time (the offset gains keys).

The external system is the JSON-lines log of :mod:`examples.connectors._jsonl`
(``p<k>.jsonl`` per partition), but the number of partitions is not an option:
the source lists the directory, and the context adds a partition as the log
grows (:class:`GrowingLogContext`: one more partition per ``ROWS_PER_NEW_PARTITION``
lines logged). Offsets are ``{"0": n0, "1": n1, ...}`` with keys in numeric
partition order; ``initialOffset()`` is ``{}`` (no partition yet: a partition
absent from an offset starts at line 0), so it is the same in every reader.
``latestOffset(start)`` keeps every key of ``start`` and never goes below it.

It passes every check (``admission-control`` is skipped: the default read limit
is ``ReadAllAvailable``)::

    python -m harness check-source examples/connectors/growing_partitions.py:GrowingPartitionsSource \\
        --context examples/connectors/growing_partitions.py:growing_context

Its broken twin, which keys offsets by ``int`` partition ids, is
:mod:`examples.connectors.int_key_offsets`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit

from examples.connectors._jsonl import SCHEMA, append, line_count, read_lines
from examples.connectors.jsonl_source import LinePartition

#: The context opens partition ``k`` once the log holds ``k * ROWS_PER_NEW_PARTITION`` lines.
ROWS_PER_NEW_PARTITION = 30
_LOG = re.compile(r"p(\d+)\.jsonl")


def partitions_in(root: str | Path) -> list[int]:
    """Partition ids with a log file under ``root``, ascending."""
    d = Path(root)
    if not d.is_dir():
        return []
    return sorted(int(m.group(1)) for f in d.iterdir() if (m := _LOG.fullmatch(f.name)))


class GrowingLogContext:
    """External context: a log directory that starts empty and gains a partition as it grows.

    ``add_data(rows)`` first opens partitions until there are ``1 + lines // ROWS_PER_NEW_PARTITION``
    of them (decided by the directory alone, so any process sees the same layout), then spreads the
    rows over all of them, fsynced."""

    feeds_data = True

    def __init__(self, workdir: Path) -> None:
        self.root = Path(workdir) / "log"
        self.root.mkdir(parents=True, exist_ok=True)

    def options(self) -> dict[str, str]:
        return {"path": str(self.root)}

    def add_data(self, rows: int) -> None:
        present = partitions_in(self.root)
        lines = sum(line_count(self.root, p) for p in present)
        wanted = max(len(present), 1 + lines // ROWS_PER_NEW_PARTITION)
        parts = [*present, *range(len(present), wanted)]
        for p in parts:
            append(self.root, p, max(1, math.ceil(rows / len(parts))))

    def close(self) -> None:
        """Files only: nothing to release."""


def growing_context(workdir: Path) -> GrowingLogContext:
    """Context factory (``--context examples/connectors/growing_partitions.py:growing_context``)."""
    return GrowingLogContext(workdir)


class GrowingPartitionsReader(DataSourceStreamReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.root = options["path"]

    def initialOffset(self) -> dict[str, int]:
        return {}

    def ends(self, start: Mapping[str, Any]) -> dict[Any, int]:
        """Lines per partition now, never below ``start``; keys are the partition ids as strings."""
        ends = {str(p): line_count(self.root, p) for p in partitions_in(self.root)}
        for key, n in start.items():
            ends[key] = max(ends.get(key, 0), int(n))
        return ends

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        return {k: v for k, v in sorted(self.ends(start).items(), key=lambda kv: int(kv[0]))}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        return [
            LinePartition(int(k), int(start.get(k, 0)), int(e)) for k, e in end.items() if int(e) > int(start.get(k, 0))
        ]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, LinePartition)
        for rec in read_lines(self.root, partition.partition, partition.start, partition.end):
            yield (rec["partition"], rec["line"], rec["value"])


class GrowingPartitionsSource(DataSource):
    """Format ``growing_partitions``; option ``path`` (set by the context)."""

    @classmethod
    def name(cls) -> str:
        return "growing_partitions"

    def schema(self) -> str:
        return SCHEMA

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return GrowingPartitionsReader(self.options)
