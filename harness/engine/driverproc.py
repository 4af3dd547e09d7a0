"""The runner's handle on one child driver process (one incarnation)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fault_injectors.dstream import RUN_ENV
from fault_injectors.kills import DRIVER_GROUPS_ENV, DRIVER_PGID_ENV
from harness.spark.procs import RUN_TOKEN_ENV, kill_group, kill_token
from harness.spark.session import spark_env
from scenarios.base import RUN_OUTPUT_ENV

#: Variables a driver, its JVM and Spark's Python workers keep from their start (with the working directory):
#: an import root a scenario or a check added to ``PYTHONPATH``, a Kafka broker's address, the sink a check
#: exported, the harness's cache. Others (``PYTEST_CURRENT_TEST``, say) change under a live driver harmlessly.
LAUNCH_PREFIXES = ("HARNESS_", "SPARK_", "PYSPARK_", "JAVA_")
#: Variables a driver sets for itself (its run's output and DStream run, its process group, the groups a kill
#: takes down, its token): a process that drives a run in itself (a state machine, a nemesis test) leaves them
#: set, and a pool's driver gets its own anyway.
DRIVER_OWN = frozenset({RUN_OUTPUT_ENV, RUN_ENV, DRIVER_PGID_ENV, DRIVER_GROUPS_ENV, RUN_TOKEN_ENV})


def launch_key(environ: Mapping[str, str] | None = None, cwd: str | None = None) -> tuple[tuple[str, str], ...]:
    """What a driver started now would inherit and keep: its working directory, the entries of ``PYTHONPATH``
    (a set: a reordering imports the same modules) and the variables of :data:`LAUNCH_PREFIXES` but
    :data:`DRIVER_OWN`. A live driver whose key differs cannot serve a run of this process's environment."""
    env = os.environ if environ is None else environ
    kept = [(k, v) for k, v in env.items() if k.startswith(LAUNCH_PREFIXES) and k not in DRIVER_OWN]
    paths = sorted({p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p})
    return (("cwd", _cwd() if cwd is None else cwd), ("PYTHONPATH", os.pathsep.join(paths)), *sorted(kept))


def _cwd() -> str:
    try:
        return os.getcwd()
    except FileNotFoundError:  # a working directory removed under this process: no driver shares it
        return ""


class DriverProcess:
    """``python -m harness.engine.driver`` (or ``module``: the JVM host of :mod:`harness.engine.jvmhost`) in a new
    session (its own process group), with a line protocol on stdin/stdout and stderr appended to ``log_path``."""

    def __init__(
        self,
        log_path: Path,
        incarnation: int,
        token: str,
        master: str,
        confs: Mapping[str, str],
        extra_env: Mapping[str, str] | None = None,
        module: str = "harness.engine.driver",
    ) -> None:
        self.incarnation = incarnation
        self.name = f"driver-{incarnation}"
        self.token = token
        self.log_path = log_path
        self.launch_key = launch_key()  # this process's environment now: what DriverPool.start compares later
        log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**spark_env(), **dict(extra_env or {})}
        env[RUN_TOKEN_ENV] = token
        # The driver and its workers import scenarios by module path: make the
        # caller's working directory importable too (user pipelines in tests).
        env["PYTHONPATH"] = os.pathsep.join([*env["PYTHONPATH"].split(os.pathsep), os.getcwd()])
        cmd = [
            sys.executable,
            "-m",
            module,
            "--master",
            master,
            "--confs",
            json.dumps(dict(confs)),
            "--incarnation",
            str(incarnation),
        ]
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, start_new_session=True, env=env
            )
        self._buf = b""

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send(self, message: dict[str, Any]) -> bool:
        """Send one command; ``False`` if the driver is gone."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def receive(self, timeout_s: float) -> dict[str, Any] | None:
        """Next message, or ``None`` when the driver died (stdout closed).
        Raises ``TimeoutError`` when nothing arrives within ``timeout_s``."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name} sent nothing for {timeout_s:.0f} s")
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            return dict(json.loads(line))
        except (json.JSONDecodeError, TypeError, ValueError):
            return {"event": "error", "message": f"unreadable protocol line from {self.name}: {line[:200]!r}"}

    def wait_exit(self, timeout_s: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        """SIGKILL the driver's group and every process of this run's token."""
        kill_group(self.proc.pid)
        self.proc.wait()
        kill_token(self.token)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])
