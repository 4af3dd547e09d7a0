"""The tap: a small JSON file that says how much data the source has *available*.

The harness (not the clock) decides what exists: :func:`advance` raises the
per-partition end offsets atomically (write to a temp file, fsync, rename),
and the source's ``latestOffset`` reads it. Offsets in the tap never go
backwards; a tap that would shrink is refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from harness.errors import HarnessFailure
from scenarios.admission import Offsets, offsets_from_json, offsets_to_json


class TapError(HarnessFailure, RuntimeError):
    """The tap file is missing, unreadable, or an update would move it backwards."""


def read_tap(path: str | os.PathLike[str]) -> Offsets:
    """Current available end offsets per partition."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text())
        return offsets_from_json(raw["available"])
    except FileNotFoundError as exc:
        raise TapError(f"tap file {p} does not exist; create it with scenarios.tap.init_tap") from exc
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TapError(f"tap file {p} is unreadable ({exc}); it should be JSON {{'available': {{...}}}}") from exc


def write_tap(path: str | os.PathLike[str], available: Mapping[int, int]) -> None:
    """Atomically replace the tap with ``available`` (no monotonicity check)."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as fh:
        json.dump({"available": offsets_to_json(available)}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, p)


def init_tap(path: str | os.PathLike[str], partitions: int) -> None:
    """Create an empty tap (nothing available) for ``partitions`` partitions."""
    write_tap(path, {p: 0 for p in range(partitions)})


def advance(path: str | os.PathLike[str], added: Mapping[int, int]) -> Offsets:
    """Make ``added[p]`` more offset units available in each partition ``p``;
    returns the new tap. Negative additions are refused."""
    if any(n < 0 for n in added.values()):
        raise TapError(f"cannot remove data from the tap {path}: {dict(added)}")
    current = read_tap(path)
    unknown = set(added) - set(current)
    if unknown:
        raise TapError(f"tap {path} has no partition(s) {sorted(unknown)}")
    new = {p: current[p] + int(added.get(p, 0)) for p in current}
    write_tap(path, new)
    return new


def add_partitions(path: str | os.PathLike[str], rows: Mapping[int, int]) -> Offsets:
    """Add partitions to the tap, ``rows[p]`` offset units available in each new partition ``p`` (a source that
    grows, as a Kafka topic gains partitions); returns the new tap. A partition the tap has is refused."""
    current = read_tap(path)
    taken = sorted(set(rows) & set(current))
    if taken or any(n < 0 for n in rows.values()):
        raise TapError(f"tap {path}: cannot add partition(s) {dict(rows)}; it has {sorted(current)}")
    new = {**current, **{p: int(n) for p, n in rows.items()}}
    write_tap(path, new)
    return new
