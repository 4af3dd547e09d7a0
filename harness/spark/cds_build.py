"""Building the driver's class-data archive (see :mod:`harness.spark.cds` for what it is, where it lives
and when a driver uses it): ``python -m harness.spark.cds_build`` dumps it from a warmed-up driver, verifies
it with a real session and renames it into place, one build at a time per environment."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from harness.spark.cds import CDS_ENV, archive_path

BUILD_TIMEOUT_S = 600.0


def ensure_archive(echo: Callable[[str], None] = print) -> Path | None:
    """Build the archive if it is missing; returns its path, or ``None`` (with a
    message saying why) when it cannot be built. Never raises for a failed build.
    One build at a time per cache (a lock file); leftovers of interrupted builds are
    removed."""
    from harness.spark.session import DEFAULT_CONFS

    base = DEFAULT_CONFS["spark.driver.extraJavaOptions"]
    path = archive_path(base)
    if path is None:
        echo("cds: no 'java' found; drivers start without a class-data archive")
        return None
    if path.is_file():
        echo(f"cds: driver class-data archive present ({path})")
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.is_file():  # built by another process while this one waited
            return path
        # Leftovers of interrupted builds go; archives of other keys stay: the cache is shared by every
        # environment (and Spark release) of this user, each with an archive of its own.
        for old in path.parent.glob("spark-driver-*.tmp-*"):
            old.unlink(missing_ok=True)
        return _build(path, echo)


def _build(path: Path, echo: Callable[[str], None]) -> Path | None:
    from harness.spark.session import spark_env

    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    echo("cds: building the driver class-data archive (once per Spark install, ~40 s) ...")
    t0 = time.monotonic()
    env = {**spark_env(), CDS_ENV: "0"}
    # A damaged archive crashes the JVM that maps it (SIGBUS, measured), so a new one is
    # CRC-checked and used once for a real session before it is moved into place.
    for step in ("--dump", "--verify"):
        rc, err = _run_group([sys.executable, "-m", "harness.spark.cds_build", step, str(tmp)], env, path.parent)
        if rc != 0 or not tmp.is_file() or tmp.stat().st_size == 0:
            tmp.unlink(missing_ok=True)
            tail = "\n".join(err.strip().splitlines()[-5:])
            echo(f"cds: {step[2:]} of the archive failed (exit {rc}); drivers start without it\n{tail}")
            return None
    os.replace(tmp, path)
    echo(f"cds: built {path} ({path.stat().st_size / 2**20:.0f} MiB) in {time.monotonic() - t0:.0f} s")
    return path


def _run_group(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    """Run ``cmd`` in its own process group (its JVM included), killed whole on a timeout
    or an interrupt, so no JVM writes an archive after the caller gave up on it. The cwd
    is where a crashing JVM's ``hs_err_pid*.log`` lands (not the user's directory)."""
    proc = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        _, err = proc.communicate(timeout=BUILD_TIMEOUT_S)
        return proc.returncode, err or ""
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {BUILD_TIMEOUT_S:.0f} s"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _dump(target: str) -> int:
    """Start a driver that writes its loaded classes to ``target`` at exit, warm it, stop it."""
    from harness.spark.session import DEFAULT_CONFS, build_session
    from harness.spark.warm import warm

    options = (
        f"{DEFAULT_CONFS['spark.driver.extraJavaOptions']} -XX:+VerifySharedSpaces -XX:ArchiveClassesAtExit={target}"
    )
    spark = build_session("harness-cds", confs={"spark.driver.extraJavaOptions": options})
    warm(spark)
    spark.stop()
    # The JVM writes the archive as it exits (on EOF of its stdin); wait for it, so the
    # caller never renames a half-written archive into place.
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is None:
        print("cds: cannot wait for the JVM (no gateway process)", file=sys.stderr)
        return 1
    proc.stdin.close()
    return 0 if proc.wait(timeout=BUILD_TIMEOUT_S) == 0 else 1


def _verify(archive: str) -> int:
    """Start a driver on ``archive`` (its regions CRC-checked, ``-Xshare:on``: an archive the JVM
    cannot use fails here) and run a Python job; exit 0 only if that works. The warm-up queries are not run
    again: every region was CRC-checked as it was mapped, and they doubled the check's time (8.5 -> 15.7 s)."""
    from harness.spark.session import DEFAULT_CONFS, build_session

    base = DEFAULT_CONFS["spark.driver.extraJavaOptions"]
    options = f"{base} -Xshare:on -XX:+VerifySharedSpaces -XX:SharedArchiveFile={archive}"
    spark = build_session("harness-cds-verify", confs={"spark.driver.extraJavaOptions": options})
    rows = spark.range(3).rdd.map(lambda r: r.id * 2).collect()
    spark.stop()
    return 0 if rows == [0, 2, 4] else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.spark.cds_build", description=__doc__.splitlines()[0])
    parser.add_argument("--dump", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--verify", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dump:
        return _dump(args.dump)
    if args.verify:
        return _verify(args.verify)
    return 0 if ensure_archive(lambda m: print(m, file=sys.stderr)) is not None else 1


if __name__ == "__main__":
    sys.exit(main())
