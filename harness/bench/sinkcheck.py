"""``bench``'s ``check-sink`` figure: the reference SQLite upsert, every effect boundary of a census batch.

``python -m harness check-sink scenarios/sinks/sqlite_upsert.py:upsert_into_sqlite --read-back ...:read_sqlite
--steps all``, run as a user runs it (a subprocess, its own drivers), under the default ``--faults mixed`` (a
``foreachBatch`` function's step kills take the driver's Python alone, the JVM hosted apart) and under
``--faults hard`` (the whole driver at every kill). Figures: each command's seconds, the kills of its
``crash-anywhere`` check, and ``check_sink_python_kill_speedup`` (hard over mixed). The ratio to bare Spark,
``check_sink_kill_ratio``, is the mixed command's seconds per step kill over one steady batch of the same
function on bare Spark (20 rows, as check-sink's batches), measured in the same bench run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SINK = "scenarios/sinks/sqlite_upsert.py:upsert_into_sqlite"
READ_BACK = "scenarios/sinks/sqlite_upsert.py:read_sqlite"
#: check-sink's default batch: the bare baseline writes as many rows a batch.
BATCH_ROWS = 20


def check_sink_seconds(work: Path, faults: str) -> dict[str, Any]:
    """One timed ``check-sink --steps all --faults FAULTS`` of the reference upsert: seconds, exit code, kills."""
    report = work / f"check-sink-{faults}.json"
    cmd = [sys.executable, "-m", "harness", "check-sink", SINK, "--read-back", READ_BACK, "--steps", "all"]
    t0 = time.monotonic()
    proc = subprocess.run(
        [*cmd, "--faults", faults, "--json", str(report)], capture_output=True, text=True, timeout=1800
    )
    seconds = time.monotonic() - t0
    doc = json.loads(report.read_text()) if report.exists() else {}
    kills = len(doc.get("steps", {}).get("steps_tried", []))
    if proc.returncode != 0 or not kills:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
        raise RuntimeError(f"check-sink --faults {faults} did not conform (exit {proc.returncode}):\n{tail}")
    return {"seconds": round(seconds, 1), "exit_code": proc.returncode, "step_kills": kills}


def sink_check(work: Path, bare_batch_s: float) -> dict[str, Any]:
    """Both commands, and their ratios (``bare_batch_s``: a steady bare batch of the same function)."""
    mixed = check_sink_seconds(work, "mixed")
    hard = check_sink_seconds(work, "hard")
    return {
        "mixed": mixed,
        "hard": hard,
        "bare_batch_s": round(bare_batch_s, 3),
        "check_sink_python_kill_speedup": round(hard["seconds"] / mixed["seconds"], 2),
        "check_sink_kill_ratio": round(mixed["seconds"] / mixed["step_kills"] / bare_batch_s, 1),
    }
