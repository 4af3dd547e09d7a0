"""A real Spark standalone cluster on loopback, started from the installed Spark for a run (``--cluster
standalone:W``, recorded as the master ``standalone:W``).

The master (``org.apache.spark.deploy.master.Master``) and W workers (``...deploy.worker.Worker``, 1 core and
1 GiB each) are children of the process that owns the driver pool, each in a process group of its own, with
the pool's run token (so nothing of them outlives the run). Drivers run in client mode against
``spark://127.0.0.1:PORT``; their executors are launched by the workers, in the workers' process groups.

A supervisor thread restarts a daemon that died (the master on the same port; workers re-register), as a
service manager would on a real cluster: ``kill_worker`` and ``kill_master`` faults (:mod:`fault_injectors.
crash`) SIGKILL a daemon's group, then the cluster heals while the query runs on. Where the daemons are is
written to ``cluster.json`` (path in ``$HARNESS_CLUSTER_FILE`` for the drivers, executors and their Python
workers), rewritten on every restart.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fault_injectors.kills import CLUSTER_FILE_ENV
from harness.errors import HarnessFailure
from harness.spark.connect import free_port, inner_master, is_connect
from harness.spark.procs import RUN_TOKEN_ENV, kill_group, kill_token

STANDALONE_PREFIX = "standalone:"

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
START_TIMEOUT_S = 120.0
#: A daemon restarted this often within :data:`CRASH_WINDOW_S` is given up on (it cannot start), not looped.
MAX_RESTARTS = 5
CRASH_WINDOW_S = 60.0
#: Daemon settings: no REST submission server (its fixed port 6066 would clash between clusters), quiet logs, and
#: the master's state (workers, applications) kept in a directory, so a restarted master takes the running
#: application and its workers back (without it the application never gets an executor again).
DAEMON_PROPERTIES = {
    "spark.master.rest.enabled": "false",
    "spark.log.level": "WARN",
    "spark.deploy.recoveryMode": "FILESYSTEM",
    "spark.worker.timeout": "10",  # seconds: a lost worker is noticed, and a recovery ends, within 10 s
}
#: Settings of an application on the cluster: small executors, one core each.
APP_CONFS = {"spark.executor.cores": "1", "spark.executor.memory": "512m"}


class ClusterError(HarnessFailure, RuntimeError):
    """The cluster could not start; the message names the daemon's log."""


def is_standalone(master: str) -> bool:
    return master.startswith(STANDALONE_PREFIX)


def parse_standalone(master: str) -> int:
    """The worker count of ``standalone:W`` (1 <= W <= 8); ``ValueError`` saying what to give otherwise."""
    text = master[len(STANDALONE_PREFIX) :]
    if not text.isdigit() or not 1 <= int(text) <= 8:
        raise ValueError(f"--cluster {master!r}: give standalone:W with 1 to 8 workers (e.g. standalone:2)")
    return int(text)


def add_cluster_argument(p: Any) -> None:
    """``--cluster standalone:W`` for a CLI command that starts drivers."""
    p.add_argument(
        "--cluster",
        default=None,
        metavar="standalone:W",
        help="start a Spark standalone master and W workers on loopback for the run and drive them in client mode "
        "(faults kill_worker, kill_master); the same as --master standalone:W",
    )


def cluster_master(cluster: str | None, master: str) -> str:
    """The master a command runs: ``cluster`` when given (``master`` must then be the default), else ``master``;
    ``ValueError`` saying what to give otherwise."""
    if cluster is None:
        if is_standalone(inner_master(master)):
            if is_connect(master):
                raise ValueError(f"{master}: a standalone cluster the harness starts is not run through --remote")
            parse_standalone(master)
        return master
    if master not in ("local[2]", cluster):
        raise ValueError(
            f"--cluster {cluster} starts its own cluster; drop --master {master} and --remote "
            "(or give --master spark://HOST:PORT alone for a cluster that is already running)"
        )
    parse_standalone(cluster)
    return cluster


def executor_env_confs(env: Mapping[str, str]) -> dict[str, str]:
    """``spark.executorEnv.*`` confs that give a cluster's executors (and their Python workers) what a local
    driver's children inherit: the interpreter, import path, run token and the harness's variables (the
    driver's process group for crash points, the cluster file, step scopes)."""
    keys = [k for k in env if k.startswith("HARNESS_")] + ["PYTHONPATH", "PYSPARK_PYTHON", "PYTHONHASHSEED"]
    return {f"spark.executorEnv.{k}": env[k] for k in keys if k in env}


class StandaloneCluster:
    """A master and ``workers`` workers under ``work_dir`` (logs, worker dirs, ``cluster.json``)."""

    def __init__(self, workers: int, work_dir: Path, token: str, env: Mapping[str, str]) -> None:
        import pyspark

        self.workers = workers
        self.dir = Path(work_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.file = self.dir / "cluster.json"
        self.env = {**env, RUN_TOKEN_ENV: token, CLUSTER_FILE_ENV: str(self.file)}
        self.env.setdefault("SPARK_HOME", os.path.dirname(pyspark.__file__))
        self.token = token
        self.port = 0  # chosen free when the cluster starts
        self.props = self.dir / "daemon.properties"
        props = {**DAEMON_PROPERTIES, "spark.deploy.recoveryDirectory": str(self.dir / "recovery")}
        self.props.write_text("".join(f"{k} {v}\n" for k, v in props.items()))
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        #: Every restart the supervisor made: (daemon name, seconds since the cluster started).
        self.restarts: list[tuple[str, float]] = []
        #: Why the cluster is unusable (a daemon that kept exiting); ``None`` while it is fine.
        self.broken: str | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def names(self) -> list[str]:
        return ["master", *(f"worker-{i + 1}" for i in range(self.workers))]

    def _command(self, name: str) -> list[str]:
        spark_class = os.path.join(self.env["SPARK_HOME"], "bin", "spark-class")
        common = ["--host", "127.0.0.1", "--webui-port", "0", "--properties-file", str(self.props)]
        if name == "master":
            return [spark_class, MASTER_CLASS, "--port", str(self.port), *common]
        work = self.dir / name
        work.mkdir(exist_ok=True)
        return [spark_class, WORKER_CLASS, self.url, "--cores", "1", "--memory", "1g", "--work-dir", str(work),
                *common]  # fmt: skip

    def _spawn(self, name: str) -> None:
        with open(self.dir / f"{name}.log", "ab") as log:
            self.procs[name] = subprocess.Popen(
                self._command(name), stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=self.env,
                start_new_session=True,
            )  # fmt: skip
        self._write_file()

    def _write_file(self) -> None:
        doc: dict[str, Any] = {
            "url": self.url,
            "master": {"pid": self.procs["master"].pid} if "master" in self.procs else None,
            "workers": [{"name": n, "pid": p.pid} for n, p in self.procs.items() if n != "master"],
        }
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, self.file)

    def start(self) -> None:
        """Start the master, then the workers; return once every worker registered (``ClusterError`` naming
        the log otherwise), and start the supervisor. A cluster that was closed does not start again."""
        if self._stop.is_set():
            raise ClusterError(self.broken or "the standalone cluster was closed")
        self.port = free_port()
        self._spawn("master")
        for name in self.names()[1:]:
            self._spawn(name)
        deadline = time.monotonic() + START_TIMEOUT_S
        for name in self.names()[1:]:
            self._await_registered(name, 0, deadline)
        self._thread = threading.Thread(target=self._supervise, name="standalone-supervisor", daemon=True)
        self._thread.start()

    def _await_registered(self, name: str, seen: int, deadline: float) -> None:
        log = self.dir / f"{name}.log"
        while time.monotonic() < deadline:
            text = log.read_text(errors="replace") if log.exists() else ""
            if text.count("Successfully registered with master") > seen:
                return
            for daemon in ("master", name):
                if self.procs[daemon].poll() is not None:
                    raise ClusterError(f"Spark standalone {daemon} exited at start; its log: {self.dir}/{daemon}.log")
            time.sleep(0.1)
        raise ClusterError(f"Spark standalone {name} did not register with the master; its log: {log}")

    def _supervise(self) -> None:
        while not self._stop.wait(0.5):
            with self._lock:
                if self._stop.is_set():
                    return
                for name, proc in list(self.procs.items()):
                    if proc.poll() is None:
                        continue
                    now = round(time.monotonic() - self._started, 1)
                    recent = [t for n, t in self.restarts if n == name and now - t < CRASH_WINDOW_S]
                    with open(self.dir / f"{name}.log", "ab") as log:
                        if len(recent) >= MAX_RESTARTS:
                            self.broken = (
                                f"Spark standalone {name} exited {len(recent) + 1} times within "
                                f"{CRASH_WINDOW_S:.0f} s; not restarting it. Its log: {self.dir}/{name}.log"
                            )
                            log.write(f"\nharness: {self.broken}\n".encode())
                            del self.procs[name]
                            continue
                        log.write(f"\nharness: {name} exited ({proc.returncode}); restarting it\n".encode())
                    self.restarts.append((name, now))
                    self._spawn(name)

    def pids(self) -> dict[str, int]:
        return {name: proc.pid for name, proc in self.procs.items()}

    def close(self) -> None:
        """Stop the supervisor, SIGKILL every daemon's group (the workers' executors with them) and every process
        of the cluster's token; wait for them. Idempotent; a closed cluster does not start again."""
        self._stop.set()
        with self._lock:
            procs, self.procs = list(self.procs.values()), {}
            for proc in procs:
                if proc.poll() is None:
                    kill_group(proc.pid)
            for proc in procs:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        kill_token(self.token)
