"""The subject's own exception, found in what Spark reported: the kits' side of :mod:`harness.verdict.raised`.

A report that shows the first lines of Spark's error names Spark's wrapper (``python_streaming_source_runner.py``,
``pyspark/worker.py``), not the bug. :func:`source_raised` names what a source under test raised inside Spark:
the exception and the source's innermost frame, or, when PySpark raised on a value the source returned (a row of
the wrong arity, an offset ``json.dumps`` refuses: no frame of the source's code in any traceback), that exception
and the method that returned it, with the file and line where the reader defines it. ``None``: no Python
traceback at all (a dead process, Spark's own error), which stays an infrastructure error.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.verdict.raised import (
    Raised,
    find_raised,
    is_subject_file,
    raised_here,
    rejected_value,
    short_frame,
    spark_words,
    subject_frame,
    subject_roots,
)

__all__ = [
    "Raised",
    "find_raised",
    "is_subject_file",
    "log_texts",
    "method_frame",
    "raised_here",
    "rejected_value",
    "short_frame",
    "source_raised",
    "spark_words",
    "subject_frame",
    "subject_roots",
]

#: A Python worker's error: in a source run only the source's ``read`` runs in one (the parquet sink has no Python).
_WORKER = "An exception was thrown from the Python worker"
#: An error of the streaming source runner, the Python process that runs the reader's other methods.
_RUNNER = "Python streaming data source"


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


def method_frame(reader_cls: type[Any] | None, method: str) -> str:
    """``path:line in Class.method`` where ``reader_cls`` defines ``method`` (``""`` when it cannot be found)."""
    fn = getattr(reader_cls, method, None) if reader_cls is not None and method else None
    code = getattr(inspect.unwrap(fn), "__code__", None) if fn is not None else None
    if code is None:
        return ""
    return f"{code.co_filename}:{code.co_firstlineno} in {getattr(fn, '__qualname__', method)}"


def source_raised(texts: Iterable[str], module: str = "", reader_cls: type[Any] | None = None) -> Raised | None:
    """What the source of ``module`` (its reader class ``reader_cls``, when known) raised inside Spark, as said
    in ``texts`` (Spark's error first, then the driver logs): see the module docstring."""
    texts = list(texts)
    roots = subject_roots(module) if module else ()
    found = find_raised(texts, roots)
    if found is not None:
        return found
    error = texts[0] if texts else ""
    # Only Spark's error, and only an error of the source's Python code: a log also holds the tracebacks that
    # workers print when their JVM is killed (a planned fault), which are nobody's rejected value.
    if _WORKER not in error and _RUNNER not in error:
        return None
    rejected = rejected_value([error], roots)
    if rejected is None:
        return None
    method = rejected.method or ("read" if _WORKER in error else "")
    located = method_frame(reader_cls, method)
    return replace(rejected, method=method, frame=located, outer=located)
