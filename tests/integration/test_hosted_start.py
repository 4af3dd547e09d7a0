"""A pool's hosted JVM begun ahead of its first driver (``HostedJvm.begin``): a host that dies before it is ready
is replaced by the next start, and a pool closed before its first start leaves no process behind."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from harness.engine.pool import DriverPool
from harness.spark.procs import pids_with_token
from harness.spark.session import DEFAULT_MASTER

# CI time (~24 s): the default suite's hosted pools are check-sink's under test_kill_python.py; these two are
# the host's start-up failures, in the heavy tier.
pytestmark = [pytest.mark.spark, pytest.mark.heavy]


def test_a_host_that_died_before_it_was_ready_is_replaced(tmp_path: Path) -> None:
    """A host killed while it starts (a whole-driver kill, an out-of-memory kill): the first driver gets a new
    host instead of waiting on the dead one's closed pipe."""
    with DriverPool(tmp_path / "logs", DEFAULT_MASTER, {}, host_jvm=True) as pool:
        assert pool.hosted is not None
        pool.hosted.begin()
        dead = pool.hosted.host
        assert dead is not None
        os.killpg(dead.proc.pid, signal.SIGKILL)
        dead.proc.wait(30)
        drv, _ = pool.start()
        assert pool.hosted.host is not dead and pool.hosted.hosts == 2
        assert pool.hosted.alive() and drv.proc.poll() is None


def test_a_pool_closed_before_its_host_was_ready_leaves_nothing(tmp_path: Path) -> None:
    pool = DriverPool(tmp_path / "logs", DEFAULT_MASTER, {}, host_jvm=True)
    assert pool.hosted is not None
    pool.hosted.begin()
    assert pids_with_token(pool.token, prefix=True)
    pool.close()
    assert not pids_with_token(pool.token, prefix=True), "processes outlived close"
