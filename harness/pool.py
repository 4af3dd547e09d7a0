"""A pool of one: the live child driver a runner (or a whole campaign) reuses.

Starting a driver costs a JVM and cold Python workers (~6-10 s here); a run
needs a new one only after a hard kill. The pool keeps at most one driver
alive, opens run directories in it in turn, and replaces it when it dies.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.driverproc import DriverProcess
from harness.procs import kill_token, new_token

STARTUP_TIMEOUT_S = 180.0


class DriverStartError(RuntimeError):
    """A driver did not come up; the message names its log file."""


class DriverPool:
    def __init__(self, log_dir: Path, master: str, confs: Mapping[str, str], token: str | None = None) -> None:
        self.log_dir = Path(log_dir)
        self.master = master
        self.confs = dict(confs)
        self.token = token or new_token()
        self.driver: DriverProcess | None = None
        self.incarnations = 0
        self._open_run: Path | None = None

    def start(self) -> tuple[DriverProcess, float]:
        """A live driver (started if needed) and how long starting it took (0 if reused)."""
        if self.driver is not None:
            return self.driver, 0.0
        self.incarnations += 1
        t0 = time.monotonic()
        drv = DriverProcess(
            self.log_dir / f"driver-{self.incarnations}.log", self.incarnations, self.token, self.master, self.confs
        )
        try:
            msg = drv.receive(STARTUP_TIMEOUT_S)
        except TimeoutError:
            msg = {"event": "error", "message": f"no answer within {STARTUP_TIMEOUT_S:.0f} s"}
        if msg is None or msg.get("event") != "ready":
            drv.kill()
            reason = (msg or {}).get("message", "it exited before answering")
            raise DriverStartError(f"{drv.name} failed to start: {reason}\n  log: {drv.log_path}\n{drv.log_tail()}")
        self.driver = drv
        self._open_run = None
        return drv, time.monotonic() - t0

    def open(self, run_dir: Path, timeout_s: float) -> dict[str, Any] | None:
        """Make ``run_dir`` the driver's current run (no-op if it already is).
        Returns the driver's answer, or ``None`` if the driver died."""
        drv, _ = self.start()
        if self._open_run == run_dir:
            return {"event": "opened"}
        if not drv.send({"cmd": "open", "run_dir": str(run_dir)}):
            return None
        msg = drv.receive(timeout_s)
        if msg is not None and msg.get("event") == "opened":
            self._open_run = run_dir
        return msg

    def discard(self) -> None:
        """Kill the current driver (and every process of this pool's token)."""
        drv, self.driver, self._open_run = self.driver, None, None
        if drv is not None:
            drv.kill()

    def close(self, grace_s: float = 60.0) -> None:
        """Stop the driver gracefully, then make sure nothing of the pool survives."""
        drv, self.driver, self._open_run = self.driver, None, None
        if drv is not None:
            if drv.send({"cmd": "exit"}):
                drv.wait_exit(grace_s)
            drv.kill()
        kill_token(self.token)

    def __enter__(self) -> DriverPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
