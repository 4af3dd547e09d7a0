"""A pool of one: the live child driver a runner (or a whole campaign) reuses.

Starting a driver costs a JVM and cold Python workers (~6-10 s here); a run
needs a new one only after a hard kill. The pool keeps at most one driver
alive, opens run directories in it in turn, and replaces it when it dies.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from fault_injectors.kills import CLUSTER_FILE_ENV
from harness.engine.driverproc import DriverProcess, launch_key
from harness.engine.hosted import HostedJvm
from harness.errors import HarnessFailure
from harness.spark.procs import kill_token, new_token
from harness.spark.session import spark_env
from harness.spark.standalone import StandaloneCluster, is_standalone, parse_standalone

STARTUP_TIMEOUT_S = 180.0

#: A standby driver's readiness: ``warm`` has also run the warm-up query (its Python workers, the parquet sink and
#: a state store: the first batch after a take-over costs one steady batch), ``ready`` only has its JVM and
#: SparkSession up. On 2 cores the warm-up's 4.5 CPU-s compete with the active driver: ``run --kills 3`` took
#: 1.36x as long with a warm standby as with none, and 0.78-0.82x with a ready one (docs/bench.md).
Standby = Literal["warm", "ready"]


def standby_for_kills(driver_kills: int) -> Standby | bool:
    """A ``"ready"`` standby for a run of its own that kills the driver twice or more, none otherwise. Measured on
    2 cores (``run file_sink_stateless``, paired): 0.82x the wall time with 3 kills (0.78x on
    ``agg_watermark_append``), 0.97x with 1 (its start competes with the first driver's for the cores);
    ``check-source``'s end-to-end run with 2, 0.86x."""
    return "ready" if driver_kills >= 2 else False


class DriverStartError(HarnessFailure, RuntimeError):
    """A driver did not come up; the message names its log file."""


class DriverPool:
    """At most one active driver, plus (with ``standby=True`` or ``"warm"``) a warm standby:
    a second driver whose SparkSession and Python workers are already up (with ``"ready"``: its SparkSession), which
    becomes the active one the moment the active one is killed (and a new
    standby is started behind it). Each driver has its own run token
    (``<pool token>.<incarnation>``), so discarding one never touches the other.

    A ``standalone:W`` master starts a Spark standalone cluster (:mod:`harness.spark.standalone`) with the
    first driver; every driver runs against it, it outlives driver kills, and :meth:`close` tears it down.
    Such a pool keeps no standby (a second application would hold the workers' cores).

    With ``host_jvm=True`` Spark's JVM lives in a host process of its own (:mod:`harness.engine.jvmhost`) and
    each driver's Python process attaches to it: after a ``kill_python`` fault a spare Python process, its
    modules imported, attaches at once (:mod:`harness.engine.hosted`); a kill of the whole driver takes the
    host down too, and the next driver starts a new one. Such a pool keeps no JVM standby (the next driver
    needs no JVM of its own)."""

    def __init__(
        self,
        log_dir: Path,
        master: str,
        confs: Mapping[str, str],
        token: str | None = None,
        standby: bool | Standby = False,
        host_jvm: bool = False,
    ) -> None:
        self.log_dir = Path(log_dir)
        self.master = master
        self.confs = dict(confs)
        self.token = token or new_token()
        self.cluster: StandaloneCluster | None = None
        if is_standalone(master):
            workers = parse_standalone(master)
            self.cluster = StandaloneCluster(workers, self.log_dir / "cluster", f"{self.token}.cluster", spark_env())
            host_jvm = False
        self.hosted = HostedJvm(self.log_dir, self.token, master, self.confs, self._await) if host_jvm else None
        self.driver: DriverProcess | None = None
        self._standby: DriverProcess | None = None
        self._standby_mode: Standby = "warm"  # what the current standby was asked for
        self.incarnations = 0
        self.takeovers = 0
        self._standby_warm = False
        self._open_run: Path | None = None
        self.standby: Standby | None = None
        self.keep_standby(standby)

    def keep_standby(self, standby: bool | Standby) -> None:
        """Keep a standby from the next driver start on (``True``: ``"warm"``; ``False``: none). A pool on a
        standalone cluster keeps none (a second application would hold the workers' cores), nor does a hosted
        pool (the next driver needs no JVM of its own)."""
        mode: Standby | None = "warm" if standby is True else standby or None
        self.standby = None if self.cluster is not None or self.hosted is not None else mode

    @property
    def host_jvm(self) -> bool:
        """Whether Spark's JVM lives in a host process of its own (``host_jvm=True``, not on a cluster)."""
        return self.hosted is not None

    def _spawn(self, spare: bool = False) -> DriverProcess:
        master = self.master
        if self.cluster is not None:
            if self.cluster.broken:
                raise DriverStartError(self.cluster.broken)
            if not self.cluster.procs:
                try:
                    self.cluster.start()
                except Exception as exc:  # any start failure is reported with the daemon's log
                    self.cluster.close()
                    raise DriverStartError(str(exc)) from exc
            master = self.cluster.url
        env = {CLUSTER_FILE_ENV: str(self.cluster.file)} if self.cluster is not None else {}
        if self.hosted is not None:
            env.update(self.hosted.env(spare=spare))
        self.incarnations += 1
        n = self.incarnations
        return DriverProcess(self.log_dir / f"driver-{n}.log", n, f"{self.token}.{n}", master, self.confs, env)

    @staticmethod
    def _await(drv: DriverProcess, event: str) -> dict[str, Any]:
        try:
            msg = drv.receive(STARTUP_TIMEOUT_S)
        except TimeoutError:
            msg = {"event": "error", "message": f"no answer within {STARTUP_TIMEOUT_S:.0f} s"}
        if msg is None or msg.get("event") != event:
            drv.kill()
            reason = (msg or {}).get("message", "it exited before answering")
            raise DriverStartError(f"{drv.name} failed to start: {reason}\n  log: {drv.log_path}\n{drv.log_tail()}")
        return msg

    def start(self) -> tuple[DriverProcess, float]:
        """A live driver (the standby, or a new one if none) and how long the
        caller waited for it (0 if the active driver was reused). Drivers started under another environment
        than this process has now (:func:`~harness.engine.driverproc.launch_key`) are ended first."""
        self._drop_stale()
        if self.driver is not None:
            return self.driver, 0.0
        t0 = time.monotonic()
        if self.hosted is not None:
            return self._start_attached(t0)
        drv, self._standby = self._standby, None
        if drv is not None:
            self.takeovers += 1
            if not self._standby_warm:
                self._await(drv, "ready")
                if self._standby_mode == "warm":
                    self._await(drv, "warmed")
        else:
            drv = self._spawn()
            self._await(drv, "ready")
        self.driver = drv
        self._open_run = None
        if self.standby is not None:
            self._standby, self._standby_mode = self._spawn(), self.standby
            if self.standby == "warm":
                self._standby.send({"cmd": "warm"})
            self._standby_warm = False
        return drv, time.monotonic() - t0

    def _drop_stale(self) -> None:
        """End the live processes started under another environment: a session's pool outlives the environment
        of its first run (an import root added since, a broker's address set or gone), and a driver, its JVM
        and its workers keep theirs; the next start makes new ones."""
        key = launch_key()
        host_stale = self.hosted is not None and self.hosted.stale(key)
        if self.driver is not None and (self.driver.launch_key != key or host_stale):
            self.discard()  # a hosted pool's driver lives on its host's JVM: it goes with a stale host
        if self._standby is not None and self._standby.launch_key != key:
            self._standby.kill()
            self._standby = None
        if self.hosted is not None and host_stale:
            for proc in [p for group in self.hosted.processes() for p in group]:
                proc.kill()

    def _start_attached(self, t0: float) -> tuple[DriverProcess, float]:
        """The spare driver process attached to the hosted JVM (a new one if none), and a new spare behind it."""
        assert self.hosted is not None
        drv = self.hosted.take_spare() or self._spawn()
        try:
            self._await(drv, "ready")
        except DriverStartError:
            if self.hosted.alive(grace_s=5.0):
                raise
            # The host died under the driver (a whole-driver kill still tearing it down): once more, on a new host.
            drv = self._spawn()
            self._await(drv, "ready")
        self.driver = drv
        self._open_run = None
        self.hosted.set_spare(self._spawn(spare=True))
        self.hosted.list_groups(drv)
        return drv, time.monotonic() - t0

    def wait_for_standby(self) -> float:
        """Block until the standby is up (and warm, if it was asked to warm; benchmarks use this so a kill
        meets a ready standby); returns the seconds waited, 0 without a standby."""
        if self._standby is None or self._standby_warm:
            return 0.0
        t0 = time.monotonic()
        self._await(self._standby, "ready")
        if self._standby_mode == "warm":
            self._await(self._standby, "warmed")
        self._standby_warm = True
        return time.monotonic() - t0

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
        """Kill the active driver and every process of its token (the standby survives). In a hosted pool a driver
        discarded alive (silent, or refusing a run) may leave a hung query in the JVM: the host goes too."""
        drv, self.driver, self._open_run = self.driver, None, None
        if drv is not None:
            alive = drv.proc.poll() is None
            drv.kill()
            if alive and self.hosted is not None:
                self.hosted.kill_host()

    def retire(self, grace_s: float = 30.0) -> None:
        """End the active driver between two runs, so the next run gets a driver process with nothing of the
        last run in its memory (in a hosted pool the spare takes over on the same JVM)."""
        drv, self.driver, self._open_run = self.driver, None, None
        if drv is not None:
            drv.send({"cmd": "exit"})
            drv.wait_exit(grace_s)
            drv.kill()

    def close(self, grace_s: float = 60.0) -> None:
        """Stop the drivers gracefully, then make sure nothing of the pool survives."""
        drivers = [d for d in (self.driver, self._standby) if d is not None]
        spare, hosts = self.hosted.processes() if self.hosted is not None else ([], [])
        drivers += spare
        self.driver = self._standby = self._open_run = None
        for group in (drivers, hosts):  # a host stops the SparkContext once its driver has left it
            for drv in group:
                drv.send({"cmd": "exit"})
            for drv in group:
                drv.wait_exit(grace_s)
                drv.kill()
        if self.cluster is not None:
            self.cluster.close()
        kill_token(self.token, prefix=True)

    def __enter__(self) -> DriverPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
