"""A pool's first JVM started ahead (``DriverPool.prestart``): check-sink starts it before its protocol checks,
so the first driver of its campaigns waits less. The driver it yields must be a working one of the same pool,
and a pool closed before its first start leaves no process behind."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from harness.engine.pool import DriverPool
from harness.spark.procs import pids_with_token
from harness.spark.session import DEFAULT_MASTER

pytestmark = pytest.mark.spark


def test_a_prestarted_standby_is_the_first_driver(tmp_path: Path) -> None:
    with DriverPool(tmp_path / "logs", DEFAULT_MASTER, {}, standby="ready") as pool:
        pool.prestart()
        pool.prestart()  # a second call starts nothing more
        assert pool.incarnations == 1 and pids_with_token(pool.token, prefix=True)
        drv, _ = pool.start()
        assert pool.takeovers == 1 and drv.incarnation == 1
        assert pool.driver is drv and drv.proc.poll() is None
        assert pool.incarnations == 2, "a ready standby is started behind the first driver"


def test_a_prestarted_host_serves_the_first_attached_driver(tmp_path: Path) -> None:
    with DriverPool(tmp_path / "logs", DEFAULT_MASTER, {}, host_jvm=True) as pool:
        assert pool.hosted is not None
        pool.prestart()
        host = pool.hosted.host
        assert host is not None and host.proc.poll() is None
        drv, _ = pool.start()
        assert pool.hosted.host is host and pool.hosted.hosts == 1, "the first driver started a second host"
        assert pool.hosted.alive() and drv.proc.poll() is None


def test_a_pool_closed_before_its_first_start_leaves_nothing(tmp_path: Path) -> None:
    for host_jvm in (False, True):
        pool = DriverPool(tmp_path / f"logs-{host_jvm}", DEFAULT_MASTER, {}, standby="ready", host_jvm=host_jvm)
        pool.prestart()
        assert pids_with_token(pool.token, prefix=True)
        pool.close()
        assert not pids_with_token(pool.token, prefix=True), f"host_jvm={host_jvm}: processes outlived close"


def test_a_host_that_died_before_it_was_ready_is_replaced(tmp_path: Path) -> None:
    """A prestarted host killed while it starts (a whole-driver kill, an out-of-memory kill): the first driver
    gets a new host instead of waiting on the dead one's closed pipe."""
    with DriverPool(tmp_path / "logs", DEFAULT_MASTER, {}, host_jvm=True) as pool:
        assert pool.hosted is not None
        pool.prestart()
        dead = pool.hosted.host
        assert dead is not None
        os.killpg(dead.proc.pid, signal.SIGKILL)
        dead.proc.wait(30)
        drv, _ = pool.start()
        assert pool.hosted.host is not dead and pool.hosted.hosts == 2
        assert pool.hosted.alive() and drv.proc.poll() is None
