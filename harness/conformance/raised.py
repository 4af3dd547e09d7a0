"""The subject's own exception, found in what Spark reported.

When a connector raises inside Spark, the query fails with the Python traceback embedded in a JVM error
(``[STREAM_FAILED]``, ``[PYTHON_EXCEPTION] An exception was thrown from the Python worker``), surrounded by
Spark's and the harness's frames. A report that shows the first lines of that text names Spark's wrapper
(``python_streaming_source_runner.py``), not the bug. :func:`find_raised` reads every Python traceback in
the given texts and returns the exception type, its message and the innermost frame of the subject's own
code: a frame whose file lies outside PySpark, py4j, the harness's packages and the Python installation.
No such frame means the exception is not the subject's (``None``): it stays an infrastructure error.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
#: The line Python prints last: ``ValueError: message``, ``package.module.Custom: message`` or a bare name.
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<msg>.*))?$")
_HARNESS_ROOT = Path(__file__).resolve().parents[2]
#: Directories whose frames are never the subject's (besides any path containing a pyspark/py4j package).
_NOT_SUBJECT = tuple(
    str(p)
    for p in (
        _HARNESS_ROOT / "harness",
        _HARNESS_ROOT / "fault_injectors",
        _HARNESS_ROOT / "scenarios",
        *{Path(sysconfig.get_paths()["stdlib"]).resolve(), Path(sys.base_prefix).resolve()},
    )
)
_LIBRARY_PARTS = ("pyspark", "py4j", "site-packages", "dist-packages")


@dataclass(frozen=True)
class Raised:
    """The subject's exception: ``type`` and ``message`` as Python printed them, ``frame`` the subject's
    innermost frame (``path:line in function``) and ``outer`` its outermost one (where Spark called in)."""

    type: str
    message: str
    frame: str
    outer: str

    def describe(self) -> str:
        called = f" (called from {self.outer})" if self.outer != self.frame else ""
        return f"{self.type}: {self.message} at {self.frame}{called}"


def is_subject_file(path: str) -> bool:
    """Whether ``path`` is a connector's own file (not a library, the harness or Python itself)."""
    if path.startswith("<"):
        return False
    full = os.path.realpath(path)
    if any(f"{os.sep}{part}{os.sep}" in full for part in _LIBRARY_PARTS):
        return False
    return not any(full == d or full.startswith(d + os.sep) for d in _NOT_SUBJECT)


def find_raised(texts: Iterable[str]) -> Raised | None:
    """The first traceback in ``texts`` with a frame of the subject's own code, or ``None``."""
    for text in texts:
        found = _scan(text.splitlines())
        if found is not None:
            return found
    return None


def _scan(lines: list[str]) -> Raised | None:
    i = 0
    while i < len(lines):
        if "Traceback (most recent call last):" not in lines[i]:
            i += 1
            continue
        frames: list[str] = []
        i += 1
        while i < len(lines) and (lines[i].startswith((" ", "\t")) or not lines[i].strip()):
            m = _FRAME.match(lines[i])
            if m and is_subject_file(m["file"]):
                frames.append(f"{m['file']}:{m['line']} in {m['func']}")
            i += 1
        if i < len(lines) and frames:
            m = _EXCEPTION.match(lines[i].strip())
            if m:
                return Raised(m["type"], (m["msg"] or "").strip(), frames[-1], frames[0])
    return None


def log_texts(run_dir: Path) -> list[str]:
    """The driver logs of a run directory, newest last (where Spark writes the full Python traceback)."""
    logs = sorted((Path(run_dir) / "logs").glob("*.log"), key=lambda p: p.stat().st_mtime)
    out = []
    for log in logs:
        try:
            out.append(log.read_text(errors="replace"))
        except OSError:
            continue
    return out


def subject_frame(exc: BaseException) -> str | None:
    """``path:line in function`` of the innermost frame of the subject's own code in ``exc``'s traceback."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if is_subject_file(f.filename)]
    return f"{frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" if frames else None
