"""``--database redis://...`` against a real ``redis-server`` (Debian's package), started on a loopback port by
the test and stopped after it: a failure one campaign block shrank is replayed first by a block of another
seed (another shard, a rerun) through Redis, and a server that does not answer is refused up front."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness.chaos.database import DatabaseError, open_database, saved_failures
from tests.ci_skips import missing
from tests.unit.test_shards import replays_first

REDIS = shutil.which("redis-server") or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def redis_server(workdir: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A throw-away ``redis-server`` on 127.0.0.1 (no persistence): its URL and process, stopped and waited
    for on exit."""
    port = _free_port()
    args = [REDIS, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(workdir), "--logfile", str(workdir / "redis.log")]  # fmt: skip
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log = (workdir / "redis.log").read_text() if (workdir / "redis.log").exists() else ""
                    raise RuntimeError(f"redis-server did not start on port {port}: {log[-500:]}") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0", proc
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.skipif(REDIS is None, reason=missing("redis-server (apt-get install redis-server)"))
def test_a_failure_saved_in_redis_is_replayed_first_by_the_next_run(tmp_path: Path) -> None:
    with redis_server(tmp_path) as (url, proc):
        replays_first(open_database(url))
        # a new client (another shard's job) sees the saved failure under the same key
        assert saved_failures(open_database(url), b"harness-test") == 1
    assert proc.poll() is not None  # the server is gone
    with pytest.raises(DatabaseError, match="no Redis server answers there"):
        open_database(url)  # refused up front, not in the middle of a campaign
