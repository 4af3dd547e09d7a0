"""The Spark Connect backend: a loopback Connect server the harness starts and can kill.

A master written ``connect:<inner master>`` (``--remote local`` on the CLI)
makes :func:`harness.spark.session.build_session` start
``SparkConnectServer`` (the class ``sbin/start-connect-server.sh`` runs) as a
child of the calling driver process, on a free loopback port, running
``<inner master>``; the driver then talks to it as a Connect client. The
server stays in the driver's process group and inherits its environment
(``HARNESS_DRIVER_PGID``, ``PYTHONPATH``), so a planned SIGKILL from a
crash point -- fired in the server's Python workers -- takes down client
and server together, exactly as it takes down driver and JVM in local mode,
and the runner restarts both from the checkpoint.

Only a server the harness started can be killed by it: an external
``sc://host:port`` is refused by :func:`parse_remote`.
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from harness.errors import HarnessFailure

CONNECT_PREFIX = "connect:"
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
#: Below the pool's driver start-up timeout, so a slow server is reported as such.
START_TIMEOUT_S = 150.0


class ConnectServerError(HarnessFailure, RuntimeError):
    """The Connect server could not be started; the message says why and where its log is."""


def is_connect(master: str) -> bool:
    return master.startswith(CONNECT_PREFIX)


def inner_master(master: str) -> str:
    """``connect:local[2]`` -> ``local[2]``."""
    return master[len(CONNECT_PREFIX) :] if is_connect(master) else master


def parse_remote(remote: str | None, master: str) -> str:
    """The master a run uses for ``--remote REMOTE`` with ``--master MASTER``.

    ``None`` keeps ``master``; ``local`` gives ``connect:MASTER``. Anything
    else (e.g. ``sc://host:15002``) raises ``ValueError``: the harness must be
    able to kill the server it runs against."""
    if remote is None:
        return master
    if remote == "local":
        return CONNECT_PREFIX + inner_master(master)
    raise ValueError(
        f"--remote {remote!r}: only 'local' is supported (a loopback Spark Connect server the harness starts, "
        "kills at crash points and restarts); an external server cannot be killed by the harness"
    )


def add_remote_argument(p: argparse.ArgumentParser) -> None:
    """``--remote local`` for a CLI command that starts drivers (see :func:`parse_remote`)."""
    p.add_argument(
        "--remote",
        default=None,
        metavar="local",
        help="run against a Spark Connect server: 'local' starts one on loopback per driver (running --master), "
        "killed with the driver at crash points",
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _owns_listener(pid: int, port: int) -> bool:
    """Whether the TCP socket listening on ``port`` belongs to process ``pid`` (``spark-submit``
    execs the JVM, so it keeps the pid): another server that took the port is not ours."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # 0A: LISTEN
                inodes.add(fields[9])
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in inodes:
            return True
    return False


class ConnectServer:
    """One ``SparkConnectServer`` process (``spark-submit --class ...``) in the caller's process group."""

    def __init__(self, master: str, confs: Mapping[str, str], env: Mapping[str, str]) -> None:
        """Start the server; its output goes to this process's stderr (the driver log)."""
        import pyspark

        self.port = free_port()
        self.master = master
        spark_home = env.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)
        cmd = [os.path.join(spark_home, "bin", "spark-submit"), "--class", SERVER_CLASS, "--master", master]
        all_confs = {
            "spark.log.level": "WARN",
            **dict(confs),
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
        }
        for key, value in all_confs.items():
            cmd += ["--conf", f"{key}={value}"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=2, stderr=2, env=dict(env))
        atexit.register(self.stop)

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Return once the server accepts connections; :class:`ConnectServerError` if it exits or times out."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ConnectServerError(
                    f"Spark Connect server exited with code {self.proc.returncode} before listening "
                    "(its output is in the driver log)"
                )
            if _listening(self.port) and _owns_listener(self.proc.pid, self.port):
                where = f"(pid {self.proc.pid}, master {self.master}) listening on {self.url}"
                print(f"harness: Spark Connect server {where}", file=sys.stderr, flush=True)
                return
            time.sleep(0.2)
        self.stop()
        raise ConnectServerError(
            f"Spark Connect server not listening on port {self.port} after {timeout_s:.0f} s "
            "(its output is in the driver log)"
        )

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s; a no-op once stopped."""
        if self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
