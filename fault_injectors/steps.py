"""Steps of user code: deterministic crash points *inside* a user's sink function.

A **step** is a call from a frame of the user's modules into code outside them
(a C function, another library, a database driver, ``os``, file I/O). The
wrappers of :mod:`fault_injectors.sinks` run the user's ``foreachBatch``
function, or a ``DataSourceStreamWriter``'s ``write()`` / ``commit()`` /
``abort()``, under :class:`StepTracer` when the run needs it (a census, or a
``sink.step`` rule armed for that call) and not otherwise, so a run without
step faults pays nothing.

Contract:

- Steps are numbered 1, 2, ... in the order they *return*, so "after step k"
  is a moment in time: step k's effect happened, the statement after it did not
  start. A step that calls back into user code (``executemany`` pulling rows
  from the user's generator) contains the steps that callback takes; those
  return first.
- The user's modules are the ``.py`` files in the directory of the module that
  defines the sink (:meth:`Scope.of`), less the harness's own packages, plus
  the files and directories listed in ``HARNESS_STEP_SCOPE``
  (``os.pathsep``-separated). Frames of pyspark, py4j, the harness and any
  other library are not the user's: what *they* call is never counted.
- Not steps (a kill after one equals a kill after the step before it): calls to
  methods of built-in values (``str``, ``list``, ``dict``, ...), pure built-ins
  (``len``, ``isinstance``, ...), ``pathlib.PurePath`` arithmetic (``/``,
  ``.parent``, ``.name``), the import machinery, and finalizers
  (``__del__``, py4j's reference collection). Cyclic garbage collection is
  paused while a traced call runs, so finalizers cannot land at a
  run-dependent moment.
- The same call on the same data takes the same steps, with the same
  descriptions, in every run and process (``file.py:LINE function -> callee``).
- Calls *into* pyspark (``Row.__getitem__``, ``DataFrame.collect``) are steps;
  :mod:`fault_injectors.effects` tells which steps may change something
  outside the driver, and so where kills are distinct experiments.
"""

from __future__ import annotations

import builtins
import gc
import json
import os
import pathlib
import sys
import traceback
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fault_injectors.crash import FaultSite, read_records
from fault_injectors.effects import boundaries, inside_effects
from fault_injectors.kills import InjectedFault
from fault_injectors.plan import STEP_POINT

SCOPE_ENV = "HARNESS_STEP_SCOPE"
CENSUS_FILE = "census.jsonl"
#: The harness's own packages: never the user's code, even when a sink lives beside them.
_OWN_DIRS = frozenset(str(Path(__file__).resolve().parent.parent / name) for name in ("harness", "fault_injectors"))
_PURE_TYPES = (str, bytes, bytearray, int, float, complex, bool, tuple, list, dict, set, frozenset, type(None), range)
_PURE_BUILTINS = frozenset(
    {"len", "isinstance", "issubclass", "hasattr", "getattr", "id", "hash", "repr", "abs", "min", "max", "sum"}
    | {"sorted", "reversed", "any", "all", "round", "divmod", "chr", "ord", "format", "iter", "next", "callable"}
)
#: Finalizers run when a reference drops, wherever that happens: ``__del__`` and py4j's weakref callbacks.
_IGNORED_CALLEES = frozenset({"__del__", "_garbage_collect_object", "_garbage_collect_connection"})
_IGNORED_QUALNAMES = frozenset({"JavaObject.__init__.<locals>.<lambda>", "JavaMember.__init__.<locals>.<lambda>"})
#: ``pathlib.PurePath`` does no I/O by design: path arithmetic is not a step (``Path``'s I/O methods are).
_PATHLIB = pathlib.__file__
#: C modules whose functions users know under another name.
_MODULE_ALIASES = {"posix": "os", "nt": "os", "_io": "io", "_sqlite3": "sqlite3", "_socket": "socket"}


class Scope:
    """Which code objects are the user's: by file, cached per code object."""

    def __init__(self, roots: Iterable[str | os.PathLike[str]], own: Iterable[str] = _OWN_DIRS) -> None:
        dirs: set[str] = set()
        files: set[str] = set()
        for root in roots:
            path = os.path.realpath(root)
            (dirs if os.path.isdir(path) else files).add(path)
        self.dirs, self.files, self.own = frozenset(dirs), frozenset(files), frozenset(own)
        self._cache: dict[types.CodeType, bool] = {}

    def __call__(self, code: types.CodeType) -> bool:
        try:
            return self._cache[code]
        except KeyError:
            pass
        name = code.co_filename
        mine = False
        if not name.startswith("<"):
            path = os.path.realpath(name)
            mine = path in self.files or os.path.dirname(path) in self.dirs
        self._cache[code] = mine
        return mine

    @classmethod
    def of(cls, obj: Any) -> Scope:
        """The scope of the sink ``obj`` (a function, a bound method, a class or an instance): the directory
        of its defining file, or that file alone when it lies inside the harness's own packages."""
        target = obj.func if hasattr(obj, "func") and callable(getattr(obj, "func", None)) else obj
        code = getattr(target, "__code__", None)
        if code is None and isinstance(target, types.MethodType):
            code = getattr(target.__func__, "__code__", None)
        if code is not None:
            filename = code.co_filename
        else:
            cls_ = target if isinstance(target, type) else type(target)
            module = sys.modules.get(cls_.__module__)
            filename = getattr(module, "__file__", None) or ""
        path = os.path.realpath(filename)
        directory = os.path.dirname(path)
        inside_own = any(directory == d or directory.startswith(d + os.sep) for d in _OWN_DIRS)
        roots: list[str] = [path if inside_own else directory] if filename else []
        roots += [p for p in os.environ.get(SCOPE_ENV, "").split(os.pathsep) if p]
        return cls(roots)


def callee_name(fn: Any) -> str:
    """A C callable's stable name: ``sqlite3.Connection.commit``, ``os.replace``, ``time.sleep``."""
    name = getattr(fn, "__name__", type(fn).__name__)
    owner = getattr(fn, "__self__", None)
    if owner is None or isinstance(owner, types.ModuleType):
        module = getattr(fn, "__module__", None) or (owner.__name__ if owner is not None else "builtins")
        return f"{_MODULE_ALIASES.get(module, module)}.{name}"
    kind = owner if isinstance(owner, type) else type(owner)
    module = _MODULE_ALIASES.get(kind.__module__, kind.__module__)
    prefix = "" if module == "builtins" else f"{module}."
    return f"{prefix}{kind.__qualname__}.{name}"


def _pure(fn: Any) -> bool:
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, _PURE_TYPES):
        return True
    return owner is builtins and getattr(fn, "__name__", "") in _PURE_BUILTINS


class StepTracer:
    """Counts the steps of the code run inside ``with tracer:`` in this thread.

    ``on_step(k, description)`` is called for every ``k`` in ``targets`` after
    step ``k`` returned, at the next thing the calling frame does: its next
    call (a step or not) or its return. It may raise: the exception surfaces
    in the user's code *after* the step, as if the next statement raised, so a
    ``with`` block whose ``__enter__`` was step ``k`` is exited and an
    ``except`` around step ``k`` alone does not see it. It may end the process.
    ``record`` keeps every step's description in ``steps``."""

    def __init__(
        self,
        scope: Scope,
        targets: Iterable[int] = (),
        on_step: Callable[[int, str], None] | None = None,
        *,
        record: bool = False,
    ) -> None:
        self.scope = scope
        self.targets = frozenset(targets)
        self.on_step = on_step
        self.count = 0
        self.steps: list[str] | None = [] if record else None
        #: With ``record``: per step, how many steps were still running when it returned (its nesting depth).
        self.depths: list[int] | None = [] if record else None
        self._pending: list[tuple[types.FrameType, Any, int]] = []
        #: A target step that returned: ``(k, description, calling frame)``; fires at that frame's next event.
        self._due: tuple[int, str, types.FrameType] | None = None
        self._previous: Any = None
        self._gc_was_enabled = False

    def __enter__(self) -> StepTracer:
        self._gc_was_enabled = gc.isenabled()
        gc.disable()
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(self._previous)
        if self._gc_was_enabled:
            gc.enable()
        due, self._due = self._due, None
        if due is not None and exc[0] is None and self.on_step is not None:  # no later event came: fire now
            self.on_step(due[0], due[1])

    def _profile(self, frame: types.FrameType, event: str, arg: Any) -> None:
        due = self._due
        if due is not None and (frame is due[2] or (event == "call" and frame.f_back is due[2])):
            self._due = None
            assert self.on_step is not None
            self.on_step(due[0], due[1])
        user = self.scope
        if event == "c_call":
            if user(frame.f_code) and not _pure(arg):
                self._pending.append((frame, arg, frame.f_lineno))
        elif event == "call":
            code, back = frame.f_code, frame.f_back
            pending = self._pending
            if (
                back is not None
                and not (pending and pending[-1][0] is back and pending[-1][1] is not None)  # called by a C step
                and not user(code)
                and user(back.f_code)
                and code.co_name not in _IGNORED_CALLEES
                and getattr(code, "co_qualname", "") not in _IGNORED_QUALNAMES
                and not (code.co_filename == _PATHLIB and getattr(code, "co_qualname", "").startswith("PurePath."))
                and not code.co_filename.startswith("<frozen importlib")
            ):
                pending.append((frame, None, back.f_lineno))
        elif event == "return":
            pending = self._pending
            if pending and pending[-1][0] is frame and pending[-1][1] is None:
                self._done(pending.pop())
        else:  # c_return, c_exception
            pending = self._pending
            if pending and pending[-1][0] is frame and pending[-1][1] is arg:
                self._done(pending.pop())

    def _done(self, entry: tuple[types.FrameType, Any, int]) -> None:
        self.count += 1
        k = self.count
        if self.steps is not None and self.depths is not None:
            self.steps.append(describe(entry))
            self.depths.append(len(self._pending))
        if k in self.targets and self.on_step is not None:
            frame, cfunc, _ = entry
            caller = frame if cfunc is not None else frame.f_back
            assert caller is not None
            self._due = (k, self.steps[-1] if self.steps is not None else describe(entry), caller)


def describe(entry: tuple[types.FrameType, Any, int]) -> str:
    """``file.py:LINE function -> callee`` of a pending step."""
    frame, cfunc, line = entry
    if cfunc is None:  # a Python callee: ``frame`` is its frame, the caller is one up
        caller = frame.f_back
        assert caller is not None
        code = frame.f_code
        callee = f"{frame.f_globals.get('__name__', '?')}.{getattr(code, 'co_qualname', code.co_name)}"
    else:
        caller, callee = frame, callee_name(cfunc)
    return f"{os.path.basename(caller.f_code.co_filename)}:{line} {caller.f_code.co_name} -> {callee}"


def count_steps(fn: Callable[..., Any], *args: Any, scope: Scope | None = None) -> list[str]:
    """The steps ``fn(*args)`` takes, described (no fault fires)."""
    with StepTracer(scope or Scope.of(fn), record=True) as tracer:
        fn(*args)
    assert tracer.steps is not None
    return tracer.steps


def run_with_steps(
    site: FaultSite,
    wrapper: str,
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    batch: int | None,
    partition: int | None = None,
    attempt: int | None = None,
    owner: Any = None,
) -> Any:
    """``fn(*args)`` for the wrapper ``wrapper`` of batch ``batch``: traced when
    the run takes a census (each call's steps appended to ``census.jsonl``) or a
    ``sink.step`` rule is armed for this call (it fires just after its step
    returns); called plainly otherwise. ``owner`` (default ``fn``) decides the
    user's scope."""
    census = site.dir is not None and site.plan.census
    rules = site.armed(STEP_POINT, batch, partition, wrapper=wrapper) if site.dir is not None else []
    if not census and not rules:
        return fn(*args)

    def fire(k: int, description: str) -> None:
        site.maybe_fire(
            STEP_POINT, batch, partition=partition, attempt=attempt, step=k, wrapper=wrapper, description=description
        )

    tracer = StepTracer(
        Scope.of(fn if owner is None else owner), (r.step for r in rules if r.step), fire, record=census
    )
    completed = False
    try:
        with tracer:
            result = fn(*args)
        completed = True
        return result
    except InjectedFault as exc:
        # The fault's traceback keeps the user's frames, and what they held (an open cursor, a file), alive
        # in a cycle until cyclic GC runs; a killed process would have released them. Clear the finished
        # frames (their descriptions stay in the traceback) and collect, so a retry in this process does not
        # find, e.g., an SQLite database still locked by the failed attempt's cursor (measured).
        traceback.clear_frames(exc.__traceback__)
        gc.collect()
        raise
    finally:
        if census and tracer.steps is not None:
            _append_census(site, wrapper, batch, partition, attempt, tracer.steps, completed, tracer.depths or [])


@dataclass(frozen=True)
class CallCensus:
    """The steps one call of a wrapped sink function took."""

    wrapper: str
    batch: int | None
    partition: int | None
    attempt: int | None
    steps: tuple[str, ...]
    completed: bool
    #: Per step, how many steps were still running when it returned (empty in censuses recorded before depths).
    depths: tuple[int, ...] = ()

    def boundaries(self) -> list[int]:
        """The distinct kill points of this call (:func:`fault_injectors.effects.boundaries`)."""
        return boundaries(self.steps, self.depths)

    def inside_effects(self) -> set[int]:
        """Its kill points inside a running effect call (:func:`fault_injectors.effects.inside_effects`)."""
        return inside_effects(self.steps, self.depths)


def _append_census(
    site: FaultSite,
    wrapper: str,
    batch: int | None,
    partition: int | None,
    attempt: int | None,
    steps: list[str],
    completed: bool,
    depths: list[int],
) -> None:
    assert site.dir is not None
    record = {
        "wrapper": wrapper,
        "batch": batch,
        "partition": partition,
        "attempt": attempt,
        "steps": steps,
        "completed": completed,
        "depths": depths,
    }
    fd = os.open(site.dir / CENSUS_FILE, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
    try:
        os.write(fd, (json.dumps(record) + "\n").encode())
    finally:
        os.close(fd)


def read_census(fault_dir: str | os.PathLike[str]) -> list[CallCensus]:
    """Every recorded call, in recording order; a torn last line is ignored."""
    return [
        CallCensus(
            r["wrapper"],
            r["batch"],
            r["partition"],
            r["attempt"],
            tuple(r["steps"]),
            r["completed"],
            tuple(r.get("depths", ())),
        )
        for r in read_records(Path(fault_dir) / CENSUS_FILE)
    ]


def first_calls(calls: Iterable[CallCensus]) -> dict[tuple[str, int | None, int | None], CallCensus]:
    """The first completed call per ``(wrapper, batch, partition)``: what a fault-free run of that batch does."""
    out: dict[tuple[str, int | None, int | None], CallCensus] = {}
    for call in calls:
        if call.completed:
            out.setdefault((call.wrapper, call.batch, call.partition), call)
    return out
