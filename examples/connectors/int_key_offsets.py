"""BROKEN on purpose: offsets keyed by ``int`` partition ids.

One bug away from :mod:`examples.connectors.growing_partitions`: the reader
builds offsets as ``{0: n0, 1: n1}`` (its partition ids as they are) instead of
``{"0": n0, "1": n1}``. In one process everything agrees; but Spark stores an
offset as ``json.dumps`` text and hands ``json.loads`` of it back, so the
source gets ``{"0": n0}`` where it produced ``{0: n0}``: the offset it is given
is not the one it returned (a lookup ``start.get(0)`` finds nothing, and a
merge of the two key kinds writes both ``"0"`` and ``0``).

Check that must catch it: ``offsets-json`` (``json.loads(json.dumps(o)) != o``:
non-string keys)::

    python -m harness check-source examples/connectors/int_key_offsets.py:IntKeyOffsetsSource \\
        --context examples/connectors/growing_partitions.py:growing_context
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadLimit

from examples.connectors.growing_partitions import (
    GrowingPartitionsReader,
    GrowingPartitionsSource,
    line_count,
    partitions_in,
)


class IntKeyReader(GrowingPartitionsReader):
    def ends(self, start: Mapping[Any, Any]) -> dict[Any, int]:
        ends: dict[Any, int] = {p: line_count(self.root, p) for p in partitions_in(self.root)}  # BUG: int keys
        for key, n in start.items():
            ends[key] = max(ends.get(key, 0), int(n))
        return ends

    def latestOffset(self, start: dict[Any, int], limit: ReadLimit) -> dict[Any, int]:
        return {k: v for k, v in sorted(self.ends(start).items(), key=lambda kv: int(kv[0]))}


class IntKeyOffsetsSource(GrowingPartitionsSource):
    @classmethod
    def name(cls) -> str:
        return "int_key_offsets"

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return IntKeyReader(self.options)
