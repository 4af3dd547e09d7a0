"""Loading the connector under test by reference, the way a user names it.

A reference is ``path/to/module.py:Name`` (a file; its package is found by
walking up through directories that hold ``__init__.py``) or
``package.module:Name`` (importable as is). Spark's Python workers and the
harness's child drivers import the connector by module name, so the
directory that makes it importable is added to ``sys.path`` here and to
``PYTHONPATH`` for every child process (:func:`export_import_root`).
Errors are :class:`LoadError`, one line naming the reference and what to do.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UsageError


class LoadError(UsageError, ValueError):
    """The connector (or an option) cannot be loaded; the message says why and what to do."""


@dataclass(frozen=True)
class Ref:
    """A resolved reference: ``module:attr``, importable once ``root`` is on the path."""

    module: str
    attr: str
    root: str | None

    @property
    def spec(self) -> str:
        return f"{self.module}:{self.attr}"


def _module_for_file(path: Path) -> tuple[str, Path]:
    """Dotted module name of ``path`` and the directory to put on ``sys.path``."""
    parts = [path.stem]
    directory = path.parent
    while (directory / "__init__.py").exists():
        parts.insert(0, directory.name)
        directory = directory.parent
    return ".".join(parts), directory


def resolve(ref: str, what: str = "connector") -> Ref:
    """Parse ``ref`` without importing it."""
    target, sep, attr = ref.rpartition(":")
    if not sep or not target or not attr or not attr.isidentifier():
        raise LoadError(f"{what} {ref!r}: expected 'path/to/module.py:Name' or 'package.module:Name'")
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = Path(target).expanduser().resolve()
        if not path.is_file():
            raise LoadError(f"{what} {ref!r}: file {path} does not exist; give the path of the .py file")
        module, root = _module_for_file(path)
        return Ref(module, attr, str(root))
    return Ref(target, attr, None)


def add_import_root(root: str | None) -> None:
    """Make ``root`` importable in this process and in every child process started later."""
    if not root:
        return
    if root not in sys.path:
        sys.path.insert(0, root)
    export_import_root(root)


def export_import_root(root: str) -> None:
    """Put ``root`` on ``PYTHONPATH`` (children: Spark drivers, Python workers, the cross-process reader)."""
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([*paths, root])


def load(ref: str, what: str = "connector") -> tuple[Any, Ref]:
    """Import the object ``ref`` names; returns it and its :class:`Ref`."""
    r = resolve(ref, what)
    add_import_root(r.root)
    try:
        module = importlib.import_module(r.module)
    except Exception as exc:  # any import-time error of the user's module
        raise LoadError(f"{what} {ref!r}: cannot import module {r.module!r} ({type(exc).__name__}: {exc})") from None
    try:
        obj = getattr(module, r.attr)
    except AttributeError:
        raise LoadError(f"{what} {ref!r}: module {r.module!r} has no attribute {r.attr!r}") from None
    return obj, r


def ref_of(obj: Any) -> Ref:
    """The :class:`Ref` of an already imported class or function (for child processes),
    with the directory that makes its module importable."""
    module = sys.modules.get(obj.__module__)
    if module is None or obj.__module__ == "__main__":
        raise LoadError(f"{obj!r} is defined in __main__; move it into a module so Spark's workers can import it")
    root: str | None = None
    try:
        file = Path(inspect.getfile(module)).resolve()
    except TypeError:
        file = None
    if file is not None:
        depth = obj.__module__.count(".") + (1 if file.name != "__init__.py" else 2)
        root = str(file.parents[depth - 1])
    return Ref(obj.__module__, obj.__qualname__, root)


def parse_options(pairs: Iterable[str] | None, what: str = "--option") -> dict[str, str]:
    """``["k=v", ...]`` (every ``--option KEY=VALUE`` given) -> ``{"k": "v"}``; a pair without
    ``=`` is refused, naming ``what``."""
    out: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise LoadError(f"{what} {pair!r}: expected key=value")
        out[key.strip()] = value
    return out
