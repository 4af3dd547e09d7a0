"""A throw-away single-node Kafka broker (KRaft, broker and controller in one JVM) for tests and runs.

:func:`throwaway_kafka` formats storage in ``workdir/kafka/`` (``kafka.tools.StorageTool format
--standalone``, a random cluster id), starts ``kafka.Kafka`` from the ``kafka-broker`` jar set
(:mod:`harness.spark.jars`) on two loopback ports the OS picked, waits until an admin client lists topics,
and yields the :class:`KafkaBroker`. On exit it stops the broker (SIGTERM, SIGKILL after
:data:`STOP_GRACE_S`), keeps its log at ``workdir/kafka.log`` and deletes the data.

- The broker's JVM is the leader of a process group of its own (``start_new_session``) and carries the run
  token (:data:`harness.spark.procs.RUN_TOKEN_ENV`), so a run's leftover checks find it.
- :meth:`KafkaBroker.kill` SIGKILLs the group; :meth:`KafkaBroker.restart` starts it again on the same ports
  and log dirs: acknowledged records survive (they are in the page cache, which a process kill keeps).
- ``workdir/kafka.json`` says where the broker is (bootstrap, pid, token, log), rewritten on every start.
- Settings are for one node: replication factors and min ISRs 1, no rebalance delay, no topic
  auto-creation, retention checked every second, a 3 s broker session (:data:`SETTINGS`).
- Every failure is one line (:class:`~scenarios.base.ResourceUnavailable`): jars missing (what to run),
  ``java`` missing, or the broker not starting (its log's path and last error line).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

from harness.spark.jars import KAFKA_BROKER, require
from harness.spark.procs import RUN_TOKEN_ENV, new_token
from scenarios.base import ResourceUnavailable

START_TIMEOUT_S = 60.0
STOP_GRACE_S = 5.0
JAVA_OPTIONS = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError")
#: Broker settings for one node on a small machine (ports and directories are added per broker).
SETTINGS: Mapping[str, str] = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    "auto.create.topics.enable": "false",
    "log.retention.check.interval.ms": "1000",
    # A restart after SIGKILL waits for the dead incarnation's session to expire (default 9 s) before it
    # registers again: 3 s keeps restarts quick, heartbeats every 0.5 s keep a busy machine from fencing it.
    "broker.session.timeout.ms": "3000",
    "broker.heartbeat.interval.ms": "500",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
}
_LOG4J2 = """\
status = error
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
"""


def _java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "java", os.X_OK):
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise ResourceUnavailable(
            "Kafka broker: 'java' not found; install Java 17 (apt-get install -y openjdk-17-jre-headless)"
        )
    return found


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cluster_id() -> str:
    """A random Kafka cluster id: 16 random bytes, URL-safe base64 without padding (not starting with '-')."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def error_line(text: str) -> str:
    """The last line of ``text`` that reports an error (``ERROR``, ``Exception``, ``Error:``; stack frames
    skipped), else its last non-empty line; ``""`` for empty text. At most 400 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [
        line
        for line in lines
        if not line.startswith("at ") and (" ERROR " in line or "Exception" in line or "Error:" in line)
    ]
    return (errors or lines or [""])[-1][:400]


def last_error_line(log: Path) -> str:
    """:func:`error_line` of the file ``log`` (``""`` when it is missing)."""
    try:
        return error_line(log.read_text(errors="replace"))
    except OSError:
        return ""


class KafkaBroker:
    """One broker process in ``base`` (config, data and log there); see the module docstring."""

    def __init__(self, base: Path, token: str) -> None:
        self.base, self.token = base, token
        self.log_file = base.parent / "kafka.log"
        self.classpath = os.pathsep.join(str(j) for j in require(KAFKA_BROKER))
        self.java = _java()
        self.startup_s: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._ports: tuple[int, int] | None = None

    @property
    def log_dir(self) -> Path:
        """The broker's data directory (Kafka's ``log.dirs``: topics and the metadata log)."""
        return self.base / "data"

    @property
    def bootstrap(self) -> str:
        """``127.0.0.1:PORT`` of the broker listener (fixed at the first start)."""
        if self._ports is None:
            raise RuntimeError("the Kafka broker was never started")
        return f"127.0.0.1:{self._ports[0]}"

    @property
    def pid(self) -> int | None:
        """The broker JVM's pid (also its process group id) while it runs, else ``None``."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def _properties(self) -> Path:
        assert self._ports is not None
        port, controller = self._ports
        props = {
            **SETTINGS,
            "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller}",
            "log.dirs": str(self.log_dir),
        }
        path = self.base / "server.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        return path

    def _format(self) -> None:
        props = self._properties()
        cmd = [self.java, "-Xmx256m", "-cp", self.classpath, "kafka.tools.StorageTool", "format", "--standalone"]
        cmd += ["-t", _cluster_id(), "-c", str(props)]
        out = subprocess.run(cmd, capture_output=True, text=True, env=self._env(), timeout=START_TIMEOUT_S)
        with open(self.log_file, "a") as log:
            log.write(out.stdout + out.stderr)
        if out.returncode != 0:
            raise ResourceUnavailable(
                f"Kafka storage format failed (exit {out.returncode}): {error_line(out.stderr + out.stdout)} "
                f"(log: {self.log_file})"
            )

    def _env(self) -> dict[str, str]:
        return {**os.environ, RUN_TOKEN_ENV: self.token}

    def start(self) -> None:
        """Start the broker and wait until it serves (first start: pick ports, format storage). A broker
        that does not serve within :data:`START_TIMEOUT_S` is killed; :class:`ResourceUnavailable` names
        its log and last error line."""
        if self.pid is not None:
            raise RuntimeError(f"the Kafka broker is already running (pid {self.pid})")
        first = self._ports is None
        for attempt in range(3 if first else 1):
            if first:
                self.base.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(self.log_dir, ignore_errors=True)
                self._ports = (_free_port(), _free_port())
                self._format()
            try:
                self._launch()
                return
            except ResourceUnavailable:
                if attempt == 2 or not first or "Address already in use" not in last_error_line(self.log_file):
                    raise  # a port taken between probe and bind is retried with new ports
        raise AssertionError("unreachable")

    def _launch(self) -> None:
        log4j = self.base / "log4j2.properties"
        log4j.write_text(_LOG4J2)
        cmd = [self.java, *JAVA_OPTIONS, f"-Dlog4j2.configurationFile={log4j}", "-cp", self.classpath]
        cmd += ["kafka.Kafka", str(self._properties())]
        t0 = time.monotonic()
        with open(self.log_file, "ab") as log:
            self._proc = subprocess.Popen(
                cmd, cwd=self.base, env=self._env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True,
            )  # fmt: skip
        try:
            self._wait_ready(t0 + START_TIMEOUT_S)
        except BaseException:
            self.kill()
            raise
        self.startup_s = time.monotonic() - t0
        self._write_info()

    def _wait_ready(self, deadline: float) -> None:
        from scenarios.kafka.client import BrokerUnreachable, list_topics

        assert self._proc is not None and self._ports is not None
        while True:
            code = self._proc.poll()
            if code is not None:
                raise ResourceUnavailable(
                    f"Kafka broker exited ({code}) while starting: {last_error_line(self.log_file)} "
                    f"(log: {self.log_file})"
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ResourceUnavailable(
                    f"Kafka broker not ready after {START_TIMEOUT_S:.0f} s: {last_error_line(self.log_file)} "
                    f"(log: {self.log_file})"
                )
            if _port_open(self._ports[0]):
                try:
                    list_topics(self.bootstrap, timeout_s=min(2.0, remaining))
                    return
                except BrokerUnreachable:
                    pass
            time.sleep(0.1)

    def _write_info(self) -> None:
        info = {"bootstrap": self.bootstrap, "pid": self.pid, "token": self.token, "log": str(self.log_file)}
        (self.base.parent / "kafka.json").write_text(json.dumps(info))

    def _signal_group(self, sig: signal.Signals) -> None:
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, sig)

    def kill(self) -> None:
        """SIGKILL the broker's process group and reap it (no-op when it is not running)."""
        if self._proc is None:
            return
        self._signal_group(signal.SIGKILL)
        self._proc.wait()
        _wait_group_gone(self._proc.pid)

    def stop(self) -> None:
        """Stop the broker: SIGTERM (a clean shutdown), SIGKILL after :data:`STOP_GRACE_S`."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self._proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def restart(self) -> None:
        """Stop (if running) and start again on the same ports and log dirs; the data survives."""
        self.stop()
        self.start()


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _wait_group_gone(pgid: int, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)


@contextlib.contextmanager
def throwaway_kafka(workdir: Path, token: str | None = None, *, keep_data: bool = False) -> Iterator[KafkaBroker]:
    """A running single-node broker for the ``with`` block, in ``workdir/kafka/`` (log at
    ``workdir/kafka.log``). ``token`` (default: this process's run token, else a new one) goes into the
    broker's environment as the run token. On exit the broker is stopped and its data deleted (kept with
    ``keep_data``). Raises :class:`~scenarios.base.ResourceUnavailable` when it cannot start."""
    token = token or os.environ.get(RUN_TOKEN_ENV) or new_token()
    workdir = Path(workdir)
    broker = KafkaBroker(workdir / "kafka", token)
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()
        if not keep_data:
            shutil.rmtree(broker.base, ignore_errors=True)
