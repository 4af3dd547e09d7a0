"""A JVM class-data archive (AppCDS) of the Spark driver, so drivers start faster.

Measured here (2 cores, idle): a SparkSession took 4.8 s to start and 6.0 s
more to warm its Python workers; with the archive 2.6 s and 4.4 s. A chaos
campaign pays a JVM start for every hard kill, so this matters more than any
other start-up setting.

The archive is built once per virtual environment (``python -m harness cds``,
which ``bin/test`` and ``bin/demo`` run during set-up): a driver started with
``-XX:ArchiveClassesAtExit`` runs the standby warm-up and exits cleanly, and
the JVM writes the classes it loaded (~190 MB). Its name is a digest of the
``java`` binary, the pyspark version, the jar list and the driver's JVM
options, so a different JDK or pyspark builds a new one. :func:`java_options`
adds ``-XX:SharedArchiveFile`` to the driver's JVM options when the archive
exists; the JVM ignores a stale archive it cannot use (``-Xshare:auto``): that
costs speed, never correctness. A *damaged* archive would crash the JVM, so a new
one is CRC-checked and used by a real session before it is renamed into place.
``HARNESS_CDS=0`` turns it off.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

CDS_ENV = "HARNESS_CDS"
_OWN_FLAGS = ("SharedArchiveFile", "ArchiveClassesAtExit", "Xshare")
BUILD_TIMEOUT_S = 600.0


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else None
    if found is None or not found.exists():
        which = shutil.which("java")
        found = Path(which) if which else None
    return found.resolve() if found is not None else None


def archive_path(base_options: str) -> Path | None:
    """Where the archive for this JDK, pyspark and JVM options lives (``None`` without ``java``)."""
    import pyspark

    java = _java()
    if java is None:
        return None
    spark_home = os.environ.get("SPARK_HOME")
    jars = Path(spark_home) / "jars" if spark_home else Path(pyspark.__file__).parent / "jars"
    digest = hashlib.sha256()
    st = java.stat()
    options = " ".join(base_options.split())
    digest.update(f"{java}|{st.st_size}|{st.st_mtime_ns}|{pyspark.__version__}|{options}".encode())
    for jar in sorted(jars.glob("*.jar")):
        digest.update(f"|{jar.name}:{jar.stat().st_size}".encode())
    return Path(sys.prefix) / "harness-cds" / f"spark-driver-{digest.hexdigest()[:16]}.jsa"


def java_options(base_options: str) -> str:
    """``base_options`` plus ``-XX:SharedArchiveFile=...`` when the archive exists, CDS is
    not turned off and the options do not already choose a CDS setting."""
    if os.environ.get(CDS_ENV) == "0" or any(flag in base_options for flag in _OWN_FLAGS):
        return base_options
    path = archive_path(base_options)
    if path is None or not path.is_file():
        return base_options
    return f"{base_options} -XX:SharedArchiveFile={path}".strip()


def ensure_archive(echo: Callable[[str], None] = print) -> Path | None:
    """Build the archive if it is missing; returns its path, or ``None`` (with a
    message saying why) when it cannot be built. Never raises for a failed build.
    One build at a time per environment (a lock file); archives of other keys and
    leftovers of interrupted builds are removed."""
    from harness.session import DEFAULT_CONFS

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
        for old in path.parent.glob("spark-driver-*"):  # other JDK/pyspark, or an interrupted build
            old.unlink(missing_ok=True)
        return _build(path, echo)


def _build(path: Path, echo: Callable[[str], None]) -> Path | None:
    from harness.session import spark_env

    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    echo("cds: building the driver class-data archive (once per virtual environment, ~40 s) ...")
    t0 = time.monotonic()
    env = {**spark_env(), CDS_ENV: "0"}
    # A damaged archive crashes the JVM that maps it (SIGBUS, measured), so a new one is
    # CRC-checked and used once for a real session before it is moved into place.
    for step in ("--dump", "--verify"):
        rc, err = _run_group([sys.executable, "-m", "harness.cds", step, str(tmp)], env, path.parent)
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
    from harness.driver import warm
    from harness.session import DEFAULT_CONFS, build_session

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
    cannot use fails here) and run the warm-up queries; exit 0 only if that works."""
    from harness.driver import warm
    from harness.session import DEFAULT_CONFS, build_session

    base = DEFAULT_CONFS["spark.driver.extraJavaOptions"]
    options = f"{base} -Xshare:on -XX:+VerifySharedSpaces -XX:SharedArchiveFile={archive}"
    spark = build_session("harness-cds-verify", confs={"spark.driver.extraJavaOptions": options})
    warm(spark)
    rows = spark.range(3).rdd.map(lambda r: r.id * 2).collect()
    spark.stop()
    return 0 if rows == [0, 2, 4] else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.cds", description=__doc__.splitlines()[0])
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
