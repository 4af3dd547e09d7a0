"""The subject's own exception, found in what Spark reported.

When a pipeline or a connector raises inside Spark, the query fails with the Python traceback embedded in a JVM
error (``[STREAM_FAILED]``, ``[PYTHON_EXCEPTION] An exception was thrown from the Python worker``,
``[FOREACH_BATCH_USER_FUNCTION_ERROR]``), surrounded by Spark's and the harness's frames. Contracts:

- :func:`find_raised` reads every Python traceback in the given texts and returns the exception type, its message
  and the innermost frame of the subject's own code; ``None`` when no traceback has such a frame (the failure
  stays an infrastructure error or a loud query failure).
- A frame is the subject's (:func:`is_subject_file`) when its file lies under one of the subject's ``roots``
  (:func:`subject_roots`: its package, pip-installed or not), or outside PySpark, py4j, installed packages,
  compiled extensions (``.pyx``), the harness's packages and Python's standard library.
- An exception injected by the harness (``InjectedFault``) or raised by py4j is never the subject's.
- :func:`rejected_value` names the exception PySpark raised on what a data source method *returned* (a traceback
  with no frame of the subject's code, e.g. a row of the wrong arity, an offset ``json.dumps`` refuses) and the
  method Spark was calling, when the text says.
- Pure: no Spark; only :func:`subject_roots` consults the import system.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sysconfig
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
#: The line Python prints last: ``ValueError: message``, ``package.module.Custom: message`` or a bare name.
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<msg>.*))?$")
_HEADER = "Traceback (most recent call last):"
#: What Python prints between two tracebacks of one chain (``raise ... from``, an exception while handling one).
_CHAINED = ("The above exception was the direct cause", "During handling of the above exception")
_HARNESS_ROOT = Path(__file__).resolve().parents[2]
_HARNESS_DIRS = tuple(str(_HARNESS_ROOT / p) for p in ("harness", "fault_injectors", "scenarios"))
_STDLIB_DIRS = tuple({str(Path(sysconfig.get_paths()[k]).resolve()) for k in ("stdlib", "platstdlib")})
_LIBRARY_PARTS = ("pyspark", "py4j", "site-packages", "dist-packages")
_COMPILED = (".pyx", ".pxi", ".pxd")
#: Exception types that are never the subject's, whatever frames they passed through.
_NOT_SUBJECT_TYPES = re.compile(r"(^|\.)InjectedFault$|^py4j\.")
#: PySpark's streaming source runner names the method it was running (``perform latestOffset``).
_PERFORM = re.compile(r"Python streaming data source perform (?P<method>\w+)")
#: The runner's function for each data source method (``python_streaming_source_runner.py``).
_RUNNER_FUNCS = {
    "initial_offset_func": "initialOffset",
    "latest_offset_func": "latestOffset",
    "latest_offset_admission_control_func": "latestOffset",
    "partitions_func": "partitions",
    "commit_func": "commit",
    "get_default_read_limit_func": "getDefaultReadLimit",
    "prepare_for_trigger_available_now_func": "prepareForTriggerAvailableNow",
    "report_latest_offset_func": "reportLatestOffset",
}
#: Spark's name of a method (``perform planPartitions``) -> the reader's.
_SPARK_METHODS = {"planPartitions": "partitions", "commitSource": "commit"}
MAX_MESSAGE = 300
#: Exception types shown by class name alone (``PySparkRuntimeError``, ``ArrowInvalid``).
_LIBRARY_TYPES = ("pyspark.", "py4j.", "pyarrow.")
#: Where a pipeline's code raised outside a running query, as the harness driver says it in its error message.
BEFORE_QUERY = "before its query started"
READING_BACK = "while its output was read back"


@dataclass(frozen=True)
class Raised:
    """The subject's exception: ``type`` and ``message`` (its first line) as Python printed them, ``frame`` the
    subject's innermost frame (``path:line in function``; ``""`` when PySpark raised on a returned value) and
    ``outer`` its outermost one (where Spark called in). ``method``: the data source method Spark was running,
    when known; ``returned``: PySpark raised on what that method returned (no frame of the subject's code)."""

    type: str
    message: str
    frame: str
    outer: str
    method: str = ""
    returned: bool = False

    @property
    def exception(self) -> str:
        """``Type: message`` (the type alone for an empty message; a library's type without its module path)."""
        kind = self.type.rsplit(".", 1)[-1] if self.type.startswith(_LIBRARY_TYPES) else self.type
        return f"{kind}: {self.message}" if self.message else kind

    def describe(self) -> str:
        """One line: the exception and where the subject's code raised it (paths under the working directory
        relative)."""
        if self.returned:
            what = f"what {self.method} returned" if self.method else "what the subject's code returned"
            path, _, func = short_frame(self.frame).partition(" in ")
            where = f" ({func or self.method} at {path})" if self.frame else ""
            return f"{self.exception}, raised by PySpark on {what}{where}"
        called = f" (called from {short_frame(self.outer)})" if self.outer and self.outer != self.frame else ""
        return f"{self.exception} at {short_frame(self.frame)}{called}"


def spark_words(error: str) -> str:
    """The first line of a query failure's error, in Spark's own words: before any traceback, past the harness's
    ``... failed loudly in driver-N:``, ``[STREAM_FAILED] Query [ids] terminated with exception:`` and py4j's
    ``Reason: ... Return Message:`` that introduces a ``foreachBatch`` function's traceback."""
    lines = error.split(_HEADER.rstrip(":"))[0].strip().splitlines()
    first = re.sub(r"^.*?failed loudly in [\w-]+: ", "", lines[0] if lines else "")
    first = re.sub(r"^\[STREAM_FAILED\].*? terminated with exception: ", "", first)
    first = re.sub(r"\s*Reason: An exception was raised by the Python Proxy\. Return Message:?\s*$", "", first)
    return first.rstrip(": ")[:MAX_MESSAGE]


def short_path(path: str) -> str:
    """``path`` relative to the working directory when it lies under it, else unchanged."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith(os.pardir) else rel


def short_frame(frame: str) -> str:
    """A ``path:line in function`` frame with :func:`short_path`'s path."""
    path, sep, rest = frame.rpartition(":")
    return f"{short_path(path)}{sep}{rest}" if sep else frame


def _under(full: str, dirs: Iterable[str]) -> bool:
    return any(full == d or full.startswith(d.rstrip(os.sep) + os.sep) for d in dirs)


def subject_roots(*modules: str) -> tuple[str, ...]:
    """Where the subject's own code lives: the directory of each module's top-level package (or the file of a
    top-level module), also inside ``site-packages``; never the harness's packages or a directory holding them."""
    roots: list[str] = []
    for name in modules:
        top = name.split(".")[0]
        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        places = list(spec.submodule_search_locations or ()) or ([spec.origin] if spec.origin else [])
        for place in places:
            full = os.path.realpath(place)
            harness = _under(full, _HARNESS_DIRS) or _under(str(_HARNESS_ROOT), [full])
            if harness or os.path.basename(full) in _LIBRARY_PARTS:
                continue
            roots.append(full)
    return tuple(dict.fromkeys(roots))


def ref_roots(*refs: str) -> tuple[str, ...]:
    """:func:`subject_roots` of the modules of ``module:ATTRIBUTE`` references (a user's scenario); none for a
    built-in name."""
    return subject_roots(*(r.partition(":")[0] for r in refs if ":" in r))


def is_subject_file(path: str, roots: Iterable[str] = ()) -> bool:
    """Whether ``path`` is the subject's own file: under ``roots``, or not a library, compiled extension, the
    harness or Python itself."""
    if path.startswith("<") or path.endswith(_COMPILED):
        return False
    full = os.path.realpath(path)
    if any(f"{os.sep}{part}{os.sep}" in full for part in ("pyspark", "py4j")):
        return False
    if _under(full, roots):
        return True
    if any(f"{os.sep}{part}{os.sep}" in full for part in _LIBRARY_PARTS):
        return False
    return not _under(full, (*_HARNESS_DIRS, *_STDLIB_DIRS))


@dataclass(frozen=True)
class _Traceback:
    frames: tuple[tuple[str, str, str], ...]  # (file, line, function), outermost first
    type: str
    message: str
    chained: bool  # printed as a later link of the chain before it


def tracebacks(text: str) -> list[_Traceback]:
    """Every complete Python traceback in ``text``, in order."""
    lines, out, i, last_end = text.splitlines(), [], 0, -1
    while i < len(lines):
        if _HEADER not in lines[i]:
            i += 1
            continue
        between = lines[last_end + 1 : i] if last_end >= 0 else []
        chained = any(marker in line for line in between for marker in _CHAINED)
        frames: list[tuple[str, str, str]] = []
        i += 1
        while i < len(lines) and (lines[i].startswith((" ", "\t")) or not lines[i].strip()):
            m = _FRAME.match(lines[i])
            if m:
                frames.append((m["file"], m["line"], m["func"]))
            i += 1
        m = _EXCEPTION.match(lines[i].strip()) if i < len(lines) else None
        if m and frames:
            out.append(_Traceback(tuple(frames), m["type"], (m["msg"] or "").strip()[:MAX_MESSAGE], chained))
            last_end = i
    return out


def _subject_frames(tb: _Traceback, roots: Iterable[str]) -> list[str]:
    return [f"{f}:{line} in {func}" for f, line, func in tb.frames if is_subject_file(f, roots)]


def find_raised(texts: Iterable[str], roots: Iterable[str] = ()) -> Raised | None:
    """The subject's exception in the first text that has one (see the module docstring), or ``None``. In a chain
    of tracebacks (``raise ... from``) the last one with a frame of the subject's code: the one that propagated."""
    roots = tuple(roots)
    for text in texts:
        best: Raised | None = None
        for tb in tracebacks(text):
            if best is not None and not tb.chained:
                break  # the chain that held the subject's exception ended
            frames = _subject_frames(tb, roots)
            if frames and not _NOT_SUBJECT_TYPES.search(tb.type):
                best = Raised(tb.type, tb.message, frames[-1], frames[0])
            elif best is not None and _NOT_SUBJECT_TYPES.search(tb.type):
                best = None  # the harness's fault propagated: not the subject's failure
        if best is not None:
            return best
    return None


def rejected_value(texts: Iterable[str], roots: Iterable[str] = ()) -> Raised | None:
    """The exception PySpark raised on what a data source method returned: the last traceback of the first text
    that has one, none of whose frames is the subject's (``frame`` empty, ``returned`` set), with the method Spark
    was running when the text names it; ``None`` otherwise."""
    roots = tuple(roots)
    for text in texts:
        found = tracebacks(text)
        if not found:
            continue
        tb = found[-1]
        if _subject_frames(tb, roots) or _NOT_SUBJECT_TYPES.search(tb.type):
            return None
        return Raised(tb.type, tb.message, "", "", method=_method(text, tb), returned=True)
    return None


def _method(text: str, tb: _Traceback) -> str:
    m = _PERFORM.search(text)
    if m:
        return _SPARK_METHODS.get(m["method"], m["method"])
    for file, _, func in reversed(tb.frames):
        if func in _RUNNER_FUNCS:
            return _RUNNER_FUNCS[func]
        if file.endswith("plan_data_source_read.py"):
            return "read"
    return "read" if "from 'read' method" in tb.message else ""


def raised_here(exc: BaseException, roots: Iterable[str] = ()) -> Raised | None:
    """:func:`find_raised` of a live exception (its printed chain)."""
    return find_raised(["".join(traceback.format_exception(exc))], roots)


def pipeline_message(exc: BaseException, when: str, roots: Iterable[str] = ()) -> str | None:
    """The error message of a pipeline whose own code raised ``exc`` outside a running query (``when``, e.g.
    :data:`BEFORE_QUERY`), Python's traceback included; ``None`` when no frame of ``exc`` is the pipeline's (under
    ``roots`` or outside the harness and libraries) or it is an injected fault: the harness's error stays one."""
    if raised_here(exc, roots) is None:
        return None
    text = "".join(traceback.format_exception(exc))
    return f"the pipeline's own code raised {when}: {type(exc).__name__}: {exc}\n{text}"


def subject_frame(exc: BaseException, roots: Iterable[str] = ()) -> str | None:
    """``path:line in function`` of the innermost frame of the subject's own code in ``exc``'s traceback."""
    roots = tuple(roots)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if is_subject_file(f.filename, roots)]
    return f"{frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" if frames else None
