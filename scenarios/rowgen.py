"""Pure row generation for the replayable source.

Every row is a pure function of ``(config, partition, offset, seq)``: no clock,
no global random state, no process-dependent hashing. Two processes (or two
machines) that ask for the same range get byte-identical rows. This module has
no Spark dependency so it can be unit-tested and used by the oracle directly.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from harness.errors import UsageError

MASK64 = (1 << 64) - 1

#: Spark DDL schema of every row the source produces. ``partition``, ``offset``
#: and ``seq`` are the provenance columns: together they identify a row.
SCHEMA_DDL = "partition INT, offset BIGINT, seq INT, key INT, value BIGINT, event_time TIMESTAMP"
PROVENANCE = ("partition", "offset", "seq")

Row = tuple[int, int, int, int, int, datetime]


def splitmix64(x: int) -> int:
    """One round of SplitMix64: a bijective, well-mixed 64-bit hash."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def _unit(h: int) -> float:
    """Map a 64-bit hash to a float in [0, 1)."""
    return (h >> 11) * (1.0 / (1 << 53))


class ConfigError(UsageError, ValueError):
    """An option of the replayable source is missing or malformed."""


@dataclass(frozen=True)
class SourceConfig:
    """Everything that determines the rows of the replayable source.

    Offsets count *offset units* per partition; each unit holds
    ``rows_per_offset`` rows (``seq`` 0..rows_per_offset-1).
    """

    seed: int = 0
    partitions: int = 2
    rows_per_offset: int = 1
    num_keys: int = 16
    key_skew: float = 0.0
    event_time_start_ms: int = 1_700_000_000_000
    event_time_step_ms: int = 1_000
    disorder_ms: int = 0
    late_fraction: float = 0.0
    lateness_ms: int = 0

    def __post_init__(self) -> None:
        checks = [
            (self.partitions >= 1, "partitions must be >= 1"),
            (self.rows_per_offset >= 1, "rows_per_offset must be >= 1"),
            (self.num_keys >= 1, "num_keys must be >= 1"),
            (self.key_skew >= 0, "key_skew must be >= 0 (0 = uniform keys)"),
            (self.event_time_step_ms >= 0, "event_time_step_ms must be >= 0"),
            (self.disorder_ms >= 0, "disorder_ms must be >= 0"),
            (0.0 <= self.late_fraction <= 1.0, "late_fraction must be within [0, 1]"),
            (self.lateness_ms >= 0, "lateness_ms must be >= 0"),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(f"replayable source: {message}")

    # -- option (string map) round trip -------------------------------------
    def to_options(self) -> dict[str, str]:
        """Spark reader options (all strings) that reproduce this config."""
        return {k: json.dumps(v) for k, v in asdict(self).items()}

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> SourceConfig:
        """Parse Spark reader options; unknown keys are ignored (they belong to
        the harness), malformed values raise :class:`ConfigError` naming the key."""
        lowered = {str(k).lower(): v for k, v in options.items()}
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            raw = lowered.get(f.name.lower())
            if raw is None:
                continue
            try:
                value = json.loads(raw) if isinstance(raw, str) else raw
                kwargs[f.name] = float(value) if f.type == "float" else int(value)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"replayable source: option {f.name}={raw!r} is not a valid {f.type}") from exc
        return cls(**kwargs)

    # -- generation ----------------------------------------------------------
    @cached_property
    def _key_cdf(self) -> list[float]:
        weights = [1.0 / (k + 1) ** self.key_skew for k in range(self.num_keys)]
        total = sum(weights)
        acc, cdf = 0.0, []
        for w in weights:
            acc += w / total
            cdf.append(acc)
        cdf[-1] = 1.0
        return cdf

    def row(self, partition: int, offset: int, seq: int = 0) -> Row:
        """The row at ``(partition, offset, seq)``; pure and total."""
        h = splitmix64(self.seed & MASK64)
        h = splitmix64(h ^ (partition & MASK64))
        h = splitmix64(h ^ (offset & MASK64))
        h = splitmix64(h ^ (seq & MASK64))
        h_key, h_val, h_dis, h_late = (splitmix64(h ^ i) for i in range(1, 5))
        key = bisect.bisect_right(self._key_cdf, _unit(h_key))
        key = min(key, self.num_keys - 1)
        value = h_val % 1_000_000
        t = self.event_time_start_ms + offset * self.event_time_step_ms
        if self.disorder_ms:
            t -= h_dis % (self.disorder_ms + 1)
        if self.late_fraction and _unit(h_late) < self.late_fraction:
            t -= self.lateness_ms
        return (partition, offset, seq, key, value, datetime.fromtimestamp(t / 1000.0, tz=UTC))

    def rows(self, partition: int, start: int, end: int) -> Iterator[Row]:
        """Rows of offsets ``[start, end)`` of one partition, in offset order."""
        for offset in range(start, end):
            for seq in range(self.rows_per_offset):
                yield self.row(partition, offset, seq)
