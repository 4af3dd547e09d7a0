"""The checkpoint watcher in a real child process in its own session, for unit tests of the kills it fires
(no Spark): the child is SIGKILLed by the watcher's own fault, as a driver would be."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WATCHER_CHILD = textwrap.dedent(
    """
    import sys, time
    from fault_injectors.crash import FaultSite
    from fault_injectors.watcher import CheckpointWatcher
    faults, checkpoint = sys.argv[1], sys.argv[2]
    watcher = CheckpointWatcher(FaultSite(faults, checkpoint), checkpoint)
    assert watcher.needed()
    watcher.start()
    print("watching", flush=True)
    time.sleep(30)
    """
)


def run_watcher(faults: Path, checkpoint: Path, before: Callable[[Path], None], after: Callable[[Path], None]) -> None:
    """Start the watcher over ``faults`` (its plan saved there) and ``checkpoint``; ``before(checkpoint)`` changes
    the checkpoint while the child must stay alive (checked 0.3 s later), ``after(checkpoint)`` must get it
    SIGKILLed within 20 s. The child never outlives this call."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", WATCHER_CHILD, str(faults), str(checkpoint)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "watching"
        before(checkpoint)
        time.sleep(0.3)
        assert child.poll() is None, "fired before its moment"
        after(checkpoint)
        assert child.wait(timeout=20) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
