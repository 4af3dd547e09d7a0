"""A pool's hosted JVM: the host process (:mod:`harness.engine.jvmhost`) and a spare driver process.

The spare is a driver's Python process that has imported everything and waits, unattached, for ``attach``
(PySpark and the driver's modules take 0.3-0.5 s to import): after a ``kill_python`` fault it attaches to the
live JVM at once. The file ``HARNESS_DRIVER_GROUPS`` names lists the host's group, the active driver's and the
spare's, so a kill of the whole driver (from the driver or from a Python worker of the host's JVM) takes them
all down; the next driver then starts a new host, and a spare made for the dead host is thrown away.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fault_injectors.kills import DRIVER_GROUPS_ENV
from harness.engine.driverproc import DriverProcess
from harness.spark.attach import ATTACH_ENV, ATTACH_WAIT_ENV, GATEWAY_PORT_ENV, GATEWAY_SECRET_ENV

#: ``(driver, event) -> message``: the pool's wait for a start-up answer (raises on anything else).
Await = Callable[[DriverProcess, str], dict[str, Any]]


class HostedJvm:
    """The host of one pool (started on first use, again after it died) and its spare driver process."""

    def __init__(self, log_dir: Path, token: str, master: str, confs: dict[str, str], wait: Await) -> None:
        self.log_dir, self.token, self.master, self.confs, self._wait = log_dir, token, master, confs, wait
        self.host: DriverProcess | None = None
        self.hosts = 0
        self._gateway: dict[str, str] = {}
        self._spare: tuple[DriverProcess, int] | None = None

    @property
    def groups_file(self) -> Path:
        """The file ``HARNESS_DRIVER_GROUPS`` names (:func:`fault_injectors.kills.driver_groups` reads it)."""
        return self.log_dir / "driver-groups"

    def begin(self) -> None:
        """Start a host if there is none, or replace one that died; does not wait for it to be ready
        (:meth:`env` waits)."""
        # A host that exited (before it was ready too), or whose gateway is gone: the next driver needs a new JVM.
        if self.host is not None and (self.host.proc.poll() is not None or bool(self._gateway and not self.alive())):
            self.host.kill()
            self.host = None
        if self.host is None:
            self.hosts += 1
            k = self.hosts
            env = {DRIVER_GROUPS_ENV: str(self.groups_file)}
            host = DriverProcess(
                self.log_dir / f"jvm-{k}.log", 0, f"{self.token}.jvm{k}", self.master, self.confs, env,
                module="harness.engine.jvmhost",
            )  # fmt: skip
            host.name = f"JVM host {k}"
            self.host, self._gateway = host, {}

    def env(self, *, spare: bool = False) -> dict[str, str]:
        """The environment of a driver attached to the live host (a new host if there is none or it died,
        waited for); ``spare``: the driver waits for ``attach`` before it attaches."""
        self.begin()
        assert self.host is not None
        if not self._gateway:
            msg = self._wait(self.host, "hosting")
            self._gateway = {GATEWAY_PORT_ENV: str(msg["port"]), GATEWAY_SECRET_ENV: str(msg["secret"])}
        env = {**self._gateway, ATTACH_ENV: "1", DRIVER_GROUPS_ENV: str(self.groups_file)}
        return {**env, ATTACH_WAIT_ENV: "1"} if spare else env

    def alive(self, grace_s: float = 0.0) -> bool:
        """Whether the host lives and its gateway takes connections. A host killed with a driver may take a moment
        to exit: its closed gateway tells first; ``grace_s`` waits that long for a dying host to exit."""
        if self.host is None or self.host.proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", int(self._gateway[GATEWAY_PORT_ENV])), timeout=2.0):
                pass
        except (OSError, KeyError, ValueError):
            return False
        return not grace_s or self.host.wait_exit(grace_s) is None

    def take_spare(self) -> DriverProcess | None:
        """The spare, told to attach, if it is alive and made for the live host; else ``None``."""
        taken, self._spare = self._spare, None
        if taken is None:
            return None
        drv, generation = taken
        self.env()  # a dead host is replaced here, so the generation below is the live one's
        if generation != self.hosts or drv.proc.poll() is not None or not drv.send({"cmd": "attach"}):
            drv.kill()
            return None
        return drv

    def set_spare(self, drv: DriverProcess) -> None:
        """Keep ``drv`` (started with ``env(spare=True)``) for the next take-over on the live host."""
        self._spare = (drv, self.hosts)

    def list_groups(self, active: DriverProcess) -> None:
        """Write the groups a kill of the whole driver takes down, in the order it kills them: ``active``'s, the
        spare's, the host's (replaced at once: a kill never reads a half-written file)."""
        pids = [p.pid for p in (active, self._spare[0] if self._spare else None, self.host) if p is not None]
        tmp = self.groups_file.with_suffix(".tmp")
        tmp.write_text(" ".join(map(str, pids)) + "\n")
        os.replace(tmp, self.groups_file)

    def stale(self, key: tuple[tuple[str, str], ...]) -> bool:
        """Whether the host or the spare was started under another environment than ``key``
        (:func:`~harness.engine.driverproc.launch_key`)."""
        procs = (self.host, self._spare[0] if self._spare else None)
        return any(p is not None and p.launch_key != key for p in procs)

    def kill_host(self) -> None:
        """Kill the host (and every process of its token); the next driver starts a new one."""
        if self.host is not None:
            self.host.kill()
            self.host = None

    def processes(self) -> tuple[list[DriverProcess], list[DriverProcess]]:
        """The spare, then the host (for a pool's close: drivers leave before the host stops Spark); forgotten."""
        spare = [self._spare[0]] if self._spare else []
        host = [self.host] if self.host is not None else []
        self._spare, self.host = None, None
        return spare, host
