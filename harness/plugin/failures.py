"""A failing campaign's evidence, kept where the next run and the reader find it.

``.harness/failures/<key>.json`` remembers the bundle of each failing test (replayed first next time);
``.harness/bundles/<key>`` holds the bundle and ``.harness/runs/<key>`` the minimal failing example's run
directory (its checkpoint, sink output, history and driver logs): pytest's temporary directories do not
last. Every file is keyed by the test id and written atomically (a copy beside it, then a rename), so
pytest-xdist workers, or a run cut short, never leave another test's record or a half-written one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

FAILURES_DIR = Path(".harness") / "failures"


def failure_file(nodeid: str) -> Path:
    """Where the failure of test ``nodeid`` is remembered."""
    return FAILURES_DIR / f"{hashlib.sha1(nodeid.encode()).hexdigest()[:16]}.json"


def saved_bundle(record: Path) -> Path | None:
    """The bundle of a failure saved by an earlier run of the same test, if it still exists."""
    try:
        bundle = Path(json.loads(record.read_text())["bundle"])
    except (OSError, ValueError, KeyError):
        return None
    return bundle if bundle.exists() else None


def copy_atomically(source: Path, keep: Path) -> Path:
    """``source`` copied to ``keep`` (a copy beside it, then a rename); ``keep``."""
    if keep != source.resolve():
        staged = keep.with_name(f".{keep.name}.{os.getpid()}")
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(source, staged, symlinks=True)
        shutil.rmtree(keep, ignore_errors=True)
        os.replace(staged, keep)
    return keep


def keep_failure(record: Path, nodeid: str, bundle: Path, run_dir: Path | None = None) -> tuple[Path, Path | None]:
    """Copy ``bundle`` under ``.harness/bundles`` and ``run_dir`` (when given and present) under
    ``.harness/runs``, remember the bundle for ``nodeid``; returns where both now are."""
    kept = copy_atomically(bundle, (Path(".harness") / "bundles" / record.stem).resolve())
    run = None
    if run_dir is not None and run_dir.is_dir():
        run = copy_atomically(run_dir, (Path(".harness") / "runs" / record.stem).resolve())
    record.parent.mkdir(parents=True, exist_ok=True)
    tmp = record.with_name(f".{record.name}.{os.getpid()}")
    tmp.write_text(json.dumps({"nodeid": nodeid, "bundle": str(kept), "run_dir": str(run or "")}))
    os.replace(tmp, record)
    return kept, run


def kept_lines(bundle: Path | None, run_dir: Path | None) -> list[str]:
    """The report lines saying where a failure's evidence was kept (none when nothing was)."""
    lines = [f"kept: bundle {bundle}"] if bundle else []
    if run_dir is not None:
        lines.append(f"kept: run directory {run_dir} (checkpoint, sink output, history and driver logs)")
    return lines
