"""The parent's handle on one end-to-end child driver (:mod:`.stream_child`).

``python -m harness.conformance.stream_child RUN_DIR`` runs in a session of its
own (so a planned SIGKILL of its process group takes its JVM with it) with a
run token ``<run token>.<incarnation>`` (so killing one driver never touches a
standby, and the run's close kills every token with its prefix), and talks
over a line protocol: one JSON command per line in, one JSON answer per line out.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from typing import Any

from harness.procs import RUN_TOKEN_ENV, kill_group, kill_token
from harness.rundir import RunPaths
from harness.session import spark_env

STARTUP_TIMEOUT_S = 180.0


class ChildDriver:
    """``python -m harness.conformance.stream_child RUN_DIR`` in its own session, line protocol."""

    def __init__(self, paths: RunPaths, incarnation: int, token: str) -> None:
        self.name, self.token = f"driver-{incarnation}", f"{token}.{incarnation}"
        self.log_path = paths.driver_log(incarnation)
        env = spark_env()
        env[RUN_TOKEN_ENV] = self.token
        env["PYTHONPATH"] = os.pathsep.join([*env["PYTHONPATH"].split(os.pathsep), os.getcwd()])
        cmd = [sys.executable, "-m", "harness.conformance.stream_child", str(paths.root)]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True, env=env
            )
        self._buf = b""

    def send(self, message: dict[str, Any]) -> bool:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def receive(self, timeout_s: float) -> dict[str, Any] | None:
        """The next answer; ``None`` if the process died; ``TimeoutError`` if silent."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name} sent nothing for {timeout_s:.0f} s")
            if select.select([fd], [], [], min(left, 1.0))[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return None
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return dict(json.loads(line))

    def wait_exit(self, timeout_s: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """SIGKILL this driver's group and every process carrying its own token (not the standby's)."""
        kill_group(self.proc.pid)
        self.proc.wait()
        kill_token(self.token)

    def log_tail(self, lines: int = 12) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""
