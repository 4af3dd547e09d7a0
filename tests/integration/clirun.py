"""Running ``python -m harness`` the way a user does, from integration tests.

Every run started here carries a run-token prefix unique to this test session,
so :func:`leftover_processes` sees exactly the processes of our own runs
(not those of another run on the same machine). Its ``TMPDIR`` is
:data:`CHILD_TMPDIR`, so the temp directories a run makes without
``--run-dir`` (``harness-<scenario>-*`` and the like) land in pytest's tmp dir,
not in ``/tmp``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from harness.spark.procs import TOKEN_PREFIX_ENV, pids_with_token

ROOT = Path(__file__).resolve().parents[2]
TOKEN_PREFIX = f"pytest-{uuid.uuid4().hex[:8]}-"
#: ``TMPDIR`` of every run started here; set for the session to a directory in pytest's tmp dir by the
#: ``cli_tmpdir`` fixture (``tests/integration/conftest.py``). ``None``: the run inherits this process's.
CHILD_TMPDIR: Path | None = None


def harness(*args: str, timeout: float = 900, cwd: Path = ROOT) -> tuple[int, str, str]:
    """Run ``python -m harness *args`` in ``cwd``; returns (exit code, stdout, stderr)."""
    env = {**os.environ, TOKEN_PREFIX_ENV: TOKEN_PREFIX}
    if CHILD_TMPDIR is not None:
        env["TMPDIR"] = str(CHILD_TMPDIR)
    proc = subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )
    return proc.returncode, proc.stdout, proc.stderr


def harness_json(json_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """Run with ``--json json_path``; returns (exit code, JSON document, stdout + stderr tail)."""
    rc, out, err = harness(*args, "--json", str(json_path))
    doc = json.loads(json_path.read_text()) if json_path.exists() else {}
    return rc, doc, out + "\n" + err[-4000:]


def leftover_processes() -> list[int]:
    """Live processes of any run started through :func:`harness`."""
    return pids_with_token(TOKEN_PREFIX, prefix=True)


#: Where Debian's ``chromium`` package puts the browser (``apt-get install -y chromium``).
CHROMIUM = Path("/usr/bin/chromium")


def chromium(html: Path, work: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    """Headless Chromium on ``html`` with ``mode`` (``--dump-dom``, ``--screenshot=PATH``); a profile in ``work``."""
    profile = work / f"profile-{uuid.uuid4().hex[:8]}"
    profile.mkdir(parents=True)
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--window-size=1400,2000",
    ]
    return subprocess.run([str(CHROMIUM), *flags, *mode, html.as_uri()], capture_output=True, text=True, timeout=180)


def assert_renders(html: Path, work: Path, *texts: str) -> str:
    """Render a timeline page in headless Chromium: its labels neither leave their picture nor overlap, and every
    one of ``texts`` is on the page. Returns the DOM. Skips (as a missing component) without Chromium: call it
    after a test's own assertions."""
    import pytest

    from tests.ci_skips import missing

    if not CHROMIUM.exists():
        pytest.skip(missing("headless Chromium not installed (apt-get install -y chromium)"))
    dom = chromium(html, work, "--dump-dom").stdout
    assert 'data-layout-check="ok"' in dom, f"{html}: labels leave the picture or overlap: " + dom[:300]
    absent = [t for t in texts if t not in dom]
    assert not absent, f"{html}: {absent} not on the page"
    return dom
