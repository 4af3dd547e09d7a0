"""A tiny external system for the example connectors: append-only JSON-lines logs.

Directory layout: ``<root>/p<k>.jsonl`` per partition ``k``; line ``n`` of
partition ``k`` is ``{"partition": k, "line": n, "value": value_of(k, n)}``.
The position of a row is its line number, so an offset is
``{"0": lines read in p0, "1": ...}``. :class:`LogContext` is the external
context the conformance kit uses to feed it (``add_data``), and
:func:`log_context` its factory (``--context examples/connectors/_jsonl.py:log_context``).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

SCHEMA = "partition INT, line BIGINT, value BIGINT"


def value_of(partition: int, line: int) -> int:
    """Deterministic payload of a line (a multiplicative hash, no randomness)."""
    return (partition * 1_000_003 + line * 2_654_435_761) % 1_000_000_007


def log_file(root: str | Path, partition: int) -> Path:
    return Path(root) / f"p{partition}.jsonl"


def line_count(root: str | Path, partition: int) -> int:
    """Complete lines in the partition's log (0 if it does not exist yet)."""
    try:
        with open(log_file(root, partition), "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def read_lines(root: str | Path, partition: int, start: int, end: int) -> list[dict[str, Any]]:
    """Records of lines ``[start, end)`` of one partition."""
    out = []
    with open(log_file(root, partition), encoding="utf-8") as f:
        for n, text in enumerate(f):
            if n >= end:
                break
            if n >= start:
                out.append(json.loads(text))
    return out


def append(root: str | Path, partition: int, count: int) -> None:
    """Append ``count`` lines to a partition and fsync them (durable before returning)."""
    start = line_count(root, partition)
    with open(log_file(root, partition), "a", encoding="utf-8") as f:
        for n in range(start, start + count):
            f.write(json.dumps({"partition": partition, "line": n, "value": value_of(partition, n)}) + "\n")
        f.flush()
        os.fsync(f.fileno())


class LogContext:
    """External context: a fresh log directory; ``add_data(rows)`` spreads rows over the partitions."""

    feeds_data = True

    def __init__(self, workdir: Path, partitions: int = 2) -> None:
        self.root = Path(workdir) / "log"
        self.root.mkdir(parents=True, exist_ok=True)
        self.partitions = partitions

    def options(self) -> dict[str, str]:
        return {"path": str(self.root), "partitions": str(self.partitions)}

    def add_data(self, rows: int) -> None:
        for p in range(self.partitions):
            append(self.root, p, max(1, math.ceil(rows / self.partitions)))

    def close(self) -> None:
        """Files only: nothing to release."""


def log_context(workdir: Path) -> LogContext:
    """Context factory for the JSON-lines example sources."""
    return LogContext(workdir)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` to a new file at ``path`` all at once (temp file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_jsonl_dir(directory: str | Path) -> list[dict[str, Any]]:
    """Every row of every ``*.jsonl`` file in ``directory`` (hidden temp files excluded)."""
    d = Path(directory)
    if not d.is_dir():
        return []
    return [json.loads(line) for f in sorted(d.glob("[!.]*.jsonl")) for line in f.read_text().splitlines()]
