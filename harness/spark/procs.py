"""Process-tree hygiene: find and kill every process a run started.

Each driver the runner starts gets ``HARNESS_RUN_TOKEN=<token>`` in its
environment; the JVM, PySpark's worker daemons and their workers inherit it,
even though the daemons move to process groups of their own. Scanning
``/proc/*/environ`` for the token finds all of them, so nothing outlives a run.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

RUN_TOKEN_ENV = "HARNESS_RUN_TOKEN"
#: Optional prefix for run tokens (tests set it to find exactly their own runs' processes).
TOKEN_PREFIX_ENV = "HARNESS_RUN_TOKEN_PREFIX"


def new_token() -> str:
    """A fresh run token, prefixed with ``$HARNESS_RUN_TOKEN_PREFIX`` if set."""
    return os.environ.get(TOKEN_PREFIX_ENV, "") + uuid.uuid4().hex


def pids_with_token(token: str | None, *, prefix: bool = False) -> list[int]:
    """Live processes whose initial environment carries ``HARNESS_RUN_TOKEN=token``
    (``prefix=True``: a token starting with ``token``; ``token=None``: any token,
    i.e. every process of every run on this machine)."""
    prefix = prefix or token is None
    needle = f"{RUN_TOKEN_ENV}={token or ''}".encode()
    found = []
    me = os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            env = (entry / "environ").read_bytes()
        except OSError:
            continue
        entries = env.split(b"\0")
        if any(e.startswith(needle) for e in entries) if prefix else needle in entries:
            found.append(int(entry.name))
    return found


def kill_group(pgid: int) -> None:
    """SIGKILL a process group; a group that is already gone is fine."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_token(token: str, timeout_s: float = 10.0, *, prefix: bool = False) -> list[int]:
    """SIGKILL every process carrying ``token`` (``prefix``: a token starting
    with it) until none is left or the timeout passes; returns the pids signalled."""
    killed: list[int] = []
    deadline = time.monotonic() + timeout_s
    while True:
        pids = pids_with_token(token, prefix=prefix)
        if not pids or time.monotonic() > deadline:
            return killed
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def child_jvm_pids() -> list[int]:
    """This process's child ``java`` processes (a driver's JVM, started by py4j)."""
    me, pids = os.getpid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()
        if comm == "java" and int(rest[1]) == me:
            pids.append(int(stat.parent.name))
    return pids


def signal_all(pids: list[int], sig: signal.Signals) -> None:
    """Send ``sig`` to each of ``pids`` that still exists (a watcher pausing or resuming a driver's JVM)."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
