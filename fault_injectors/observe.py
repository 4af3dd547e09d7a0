"""Observations: things the query's processes saw that are not faults (a
sink's ``commit`` or ``abort`` being called, ...), appended to
``faults/observations.jsonl`` and merged into the run history by the runner."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

OBSERVATIONS_FILE = "observations.jsonl"


def observe(fault_dir: str | os.PathLike[str] | None, f: str, **value: Any) -> None:
    """Append one observation (no-op without a fault dir)."""
    if not fault_dir:
        return
    line = json.dumps({"time_ns": time.time_ns(), "f": f, "pid": os.getpid(), "value": value}, default=str) + "\n"
    fd = os.open(Path(fault_dir) / OBSERVATIONS_FILE, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
