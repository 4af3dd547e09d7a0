"""Runs of a query that never ends by itself and reports no batches to hook: continuous processing and
Real-time Mode (``trigger continuous:<interval>`` / ``real-time:<interval>``).

Spark writes one ``offsets/N`` and one ``commits/N`` per epoch (Real-time Mode: per batch of the trigger's
duration, offsets at its end), whether rows arrived or not. The driver starts the query and watches the
checkpoint: a run is over when the newest committed epoch covers everything the source has made available
(the source's ``caught_up``) and is at least the round's target epoch (:func:`write_target`), so the epochs
that seeded kills aim at come to pass; then it stops the query. Kills come from the checkpoint watcher
(``after_offsets_logged``, ``after_commit_logged``, timed ``batch.time``) and from fault points inside a
``foreach`` writer; a killed driver is replaced and the query restarted from the checkpoint, as in the
default rounds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.errors import Observed
from harness.inspector import batch_ids, read_offsets

#: Epochs each round must commit (the round's target is ``round * EPOCHS_PER_ROUND``): seeded kills aim at
#: epochs ``1 .. rounds * EPOCHS_PER_ROUND - 1``, which every run therefore reaches.
EPOCHS_PER_ROUND = 3
#: In the run directory: the epoch the current run must have committed before it stops.
TARGET_FILE = "epoch_target.json"
#: At most this many seconds over which a source that publishes its input spreads a round's (``SourceRun.spread_s``).
SPREAD_MAX_S = 4.0
#: How often the driver looks at the checkpoint.
POLL_S = 0.1


class EpochQueryDied(Observed, RuntimeError):
    """The query of an epoch run stopped before it caught up (its exception, if any, is the message)."""


#: Is the source caught up at this committed offset (the source's entry of ``offsets/N``, parsed JSON)?
CaughtUp = Callable[[Any], bool]


def write_target(run_dir: Path, epoch: int) -> None:
    """The epoch the next run must commit before it stops (written by the runner before each run)."""
    (run_dir / TARGET_FILE).write_text(json.dumps({"epoch": epoch}))


def read_target(run_dir: Path) -> int:
    """:func:`write_target`'s epoch; 0 without one."""
    path = run_dir / TARGET_FILE
    return int(json.loads(path.read_text())["epoch"]) if path.exists() else 0


def newest_committed(checkpoint: Path) -> tuple[int, Any] | None:
    """``(epoch, the first source's offset)`` of the newest epoch with ``commits/N``; ``None`` before any."""
    ids = batch_ids(checkpoint / "commits")
    if not ids:
        return None
    return ids[-1], read_offsets(checkpoint, ids[-1]).sources[0]


def run_epochs(query: Any, checkpoint: Path, run_dir: Path, caught_up: CaughtUp, timeout_s: float) -> dict[str, Any]:
    """Wait until ``query``'s newest committed epoch is caught up and at least the round's target, then stop the
    query; the ``caught_up`` answer (the epochs committed meanwhile, with their source offsets). ``RuntimeError``
    when the query dies first (its exception) or the wait exceeds ``timeout_s``."""
    target = read_target(run_dir)
    first = newest_committed(checkpoint)
    deadline = time.monotonic() + timeout_s
    while True:
        if not query.isActive:
            error = query.exception()
            raise EpochQueryDied(str(error) if error is not None else "the query stopped by itself")
        newest = newest_committed(checkpoint)
        if newest is not None and newest[0] >= target and caught_up(newest[1]):
            break
        if time.monotonic() > deadline:
            seen = "none" if newest is None else f"epoch {newest[0]} at {json.dumps(newest[1])}"
            query.stop()
            raise TimeoutError(
                f"the query did not catch up within {timeout_s:.0f} s (target epoch {target}; newest committed: {seen})"
            )
        time.sleep(POLL_S)
    query.stop()
    start = -1 if first is None else first[0]
    epochs = [
        {"batch_id": e, "rows": None, "start": None, "end": read_offsets(checkpoint, e).sources[0]}
        for e in batch_ids(checkpoint / "commits")
        if e > start
    ]
    return {"event": "caught_up", "batches": epochs, "epochs": True}


def round_target(round_no: int, rounds: int, faults: Sequence[tuple[int, int]], interval_ms: int, final: bool) -> int:
    """The epoch round ``round_no`` (1-based) must commit: ``round_no * EPOCHS_PER_ROUND``, and past every fault
    aimed at that epoch or before, by as many epochs as the fault waits (``faults``: ``(epoch, after_ms)``, 0 for
    one at a named point), so a timed kill finds the query still running; the final run after the last round goes
    past every fault's epoch, so each planned fault has its epoch come to pass."""
    target = rounds * EPOCHS_PER_ROUND if final else round_no * EPOCHS_PER_ROUND
    while True:  # a fault whose epoch the run reaches must have its moment too, which may reach another's
        # One epoch of slack: epochs after a restart's catch-up epoch can come faster than the interval.
        due = [e + 2 + -(-ms // max(1, interval_ms)) for e, ms in faults if final or e <= target]
        if max([target, *due]) == target:
            return target
        target = max(due)
