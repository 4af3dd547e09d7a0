"""A throw-away PostgreSQL cluster for tests: the machine's own server binaries,
an unprivileged OS user, loopback only, a random port and password.

:func:`throwaway_postgres` runs ``initdb`` into a fresh temp directory, starts
the server with ``pg_ctl`` listening on ``127.0.0.1`` (unix socket in the same
temp directory), notes it in ``workdir/cluster.json`` (temp directory, port,
postmaster pid), yields ``{"dsn": ...}``, and on exit stops the server
(``fast``, then ``immediate``, then SIGKILL of the postmaster), copies its log
to ``workdir/postgres.log`` and deletes the cluster. Binaries are looked up in
``$HARNESS_PG_BIN``, next to ``initdb`` on ``PATH`` and in
``/usr/lib/postgresql/<version>/bin`` (newest first). ``initdb`` refuses to run
as root, so as root the cluster runs as OS user ``postgres`` (or ``nobody``).
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scenarios.base import ResourceUnavailable

PG_BIN_ENV = "HARNESS_PG_BIN"
BINARIES = ("initdb", "pg_ctl", "postgres")
INSTALL_HINT = (
    "install the PostgreSQL server binaries (Debian/Ubuntu: `apt-get install postgresql`) "
    f"or point ${PG_BIN_ENV} at the directory holding {', '.join(BINARIES)}"
)


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(x) for x in path.parent.name.split(".") if x.isdigit())


def find_pg_bin() -> Path | None:
    """The first directory holding executable ``initdb``, ``pg_ctl`` and ``postgres``."""
    candidates: list[Path] = []
    if os.environ.get(PG_BIN_ENV):
        candidates.append(Path(os.environ[PG_BIN_ENV]))
    found = shutil.which("initdb")
    if found:
        candidates += [Path(found).parent, Path(found).resolve().parent]
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version_key, reverse=True)
    for c in candidates:
        if all(os.access(c / b, os.X_OK) and (c / b).is_file() for b in BINARIES):
            return c
    return None


def unavailable_reason() -> str | None:
    """Why :func:`throwaway_postgres` cannot work here, or ``None`` if it can."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the Python driver psycopg is not installed: pip install 'psycopg[binary]'"
    if find_pg_bin() is None:
        return f"PostgreSQL server binaries ({', '.join(BINARIES)}) not found; {INSTALL_HINT}"
    if os.geteuid() == 0 and _unprivileged_user() is None:
        return "running as root, and neither OS user 'postgres' nor 'nobody' exists to run initdb; create one"
    return None


def _unprivileged_user() -> pwd.struct_passwd | None:
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Cluster:
    def __init__(self, bin_dir: Path, base: Path, user: pwd.struct_passwd | None) -> None:
        self.bin, self.base, self.user = bin_dir, base, user
        self.data, self.sock, self.log = base / "data", base / "sock", base / "server.log"

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        kw: dict[str, Any] = (
            {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []} if self.user else {}
        )
        env = {"PATH": f"{self.bin}:/usr/bin:/bin", "LC_ALL": "C", "LANG": "C"}
        proc = subprocess.run(
            [str(self.bin / args[0]), *args[1:]], cwd=self.base, env=env, capture_output=True, text=True, **kw
        )
        if check and proc.returncode != 0:
            raise ResourceUnavailable(
                f"throw-away PostgreSQL: `{' '.join(args[:2])}` failed (exit {proc.returncode}): "
                f"{(proc.stderr or proc.stdout).strip()[-800:]}\n{self.log_tail()}"
            )
        return proc

    def give(self, path: Path) -> None:
        if self.user:
            os.chown(path, self.user.pw_uid, self.user.pw_gid)

    def log_tail(self) -> str:
        try:
            return "server log: " + "\n".join(self.log.read_text(errors="replace").splitlines()[-10:])
        except OSError:
            return ""

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop(self) -> None:
        pid = self.postmaster_pid()
        for mode in ("fast", "immediate"):
            if self.run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "30", "stop", check=False).returncode:
                continue
            break
        if pid is not None and serves(pid, self.base):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def serves(pid: int, base: str | os.PathLike[str]) -> bool:
    """Whether ``pid`` is a live (not zombie) server process of the cluster in ``base``
    (checked by command line, so a recycled pid is never mistaken for it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z" and str(base) in cmdline


@contextlib.contextmanager
def throwaway_postgres(workdir: str | os.PathLike[str]) -> Iterator[dict[str, str]]:
    """A running throw-away cluster for the ``with`` block; yields ``{"dsn": ...}``.
    Raises :class:`~scenarios.base.ResourceUnavailable` (saying what to install)
    when it cannot be provided here."""
    reason = unavailable_reason()
    if reason:
        raise ResourceUnavailable(reason)
    bin_dir = find_pg_bin()
    assert bin_dir is not None
    user = _unprivileged_user() if os.geteuid() == 0 else None
    base = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    cluster = _Cluster(bin_dir, base, user)
    workdir = Path(workdir)
    started = False
    try:
        cluster.give(base)
        password = secrets.token_hex(16)
        pwfile = base / "pwfile"
        pwfile.write_text(password + "\n")
        pwfile.chmod(0o600)
        cluster.give(pwfile)
        cluster.run(
            "initdb", "-D", str(cluster.data), "-U", "postgres", f"--pwfile={pwfile}", "-A", "scram-sha-256",
            "-E", "UTF8", "--locale=C", "--no-sync",
        )  # fmt: skip
        pwfile.unlink()
        cluster.sock.mkdir()
        cluster.give(cluster.sock)
        for attempt in range(3):
            port = _free_port()
            opts = f"-h 127.0.0.1 -p {port} -k {cluster.sock}"
            proc = cluster.run(
                "pg_ctl", "-D", str(cluster.data), "-l", str(cluster.log), "-w", "-t", "60", "-o", opts, "start",
                check=attempt == 2,
            )  # fmt: skip
            if proc.returncode == 0:
                break
            time.sleep(0.2)  # port taken between probe and bind: try another
        started = True
        workdir.mkdir(parents=True, exist_ok=True)
        info = {"base_dir": str(base), "port": port, "pid": cluster.postmaster_pid(), "bin": str(bin_dir)}
        (workdir / "cluster.json").write_text(json.dumps(info))
        dsn = f"host=127.0.0.1 port={port} user=postgres password={password} dbname=postgres connect_timeout=10"
        yield {"dsn": dsn}
    finally:
        if started or cluster.postmaster_pid() is not None:
            cluster.stop()
        workdir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            shutil.copyfile(cluster.log, workdir / "postgres.log")
        shutil.rmtree(base, ignore_errors=True)
