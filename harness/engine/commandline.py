"""The command lines the harness prints or stores: a run's replay line, a campaign's rerun line, a bundle's
``replay``, the JUnit ``replay`` property, the report footers. Each is built from an argument list and
shell-quoted here (:func:`shell_line`), so it pastes as it is into bash or zsh: ``--master 'connect:local[2]'``
(zsh refuses an unquoted ``[...]`` with "no matches found"), an option with a space stays one argument, and
``shlex.split`` gives the argument list back.

The harness is named as this process was started (:func:`harness_prefix`):

- started as the ``harness`` console script: ``harness`` when that name finds the same script on ``PATH``,
  else the script's absolute path;
- else ``INTERPRETER -m harness``, ``INTERPRETER`` being the interpreter the run used (``sys.executable``):
  relative to the current directory when it lies inside it (``.venv/bin/python`` from the project root, as
  the README shows), else absolute (``/path/to/.venv/bin/python`` for a run started from ``/tmp``), so the line
  works from the directory the run was started in.

Paths in the arguments (bundles, run directories) are printed as the caller holds them; saved bundles keep
their line as a string for people to read, nothing parses it back (a bundle is replayed from its spec).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

CONSOLE_SCRIPT = "harness"


def shell_line(argv: Iterable[object]) -> str:
    """``argv`` as one shell line: every argument quoted where the shell would change it."""
    return shlex.join(str(a) for a in argv)


def harness_prefix(
    *, cwd: str | Path | None = None, argv0: str | None = None, executable: str | None = None
) -> list[str]:
    """The arguments that start the harness the way this process was started (the rule is in the module's
    docstring). ``cwd``, ``argv0`` and ``executable`` default to this process's; tests pass their own."""
    argv0 = sys.argv[0] if argv0 is None and sys.argv else argv0
    if argv0 and os.path.basename(argv0) == CONSOLE_SCRIPT:
        script = os.path.abspath(argv0)
        on_path = shutil.which(CONSOLE_SCRIPT)
        same = on_path is not None and os.path.realpath(on_path) == os.path.realpath(script)
        return [CONSOLE_SCRIPT if same else script]
    return [_interpreter(executable or sys.executable or "python3", cwd), "-m", "harness"]


def harness_command(*args: object, cwd: str | Path | None = None) -> str:
    """``harness ARGS...`` as a shell line, started as this process was (``.venv/bin/python -m harness ...``)."""
    return shell_line([*harness_prefix(cwd=cwd), *args])


def _interpreter(executable: str, cwd: str | Path | None) -> str:
    """``executable`` relative to ``cwd`` when it lies inside it (with a ``/`` so the shell does not search
    ``PATH`` for it), else absolute. The venv's own path is kept: its ``python`` may be a symlink to the base
    interpreter, which would lack the project's packages."""
    if os.sep not in executable:
        return executable  # a bare name the shell finds on PATH, as it was started
    absolute = os.path.abspath(executable)
    base = os.path.abspath(cwd if cwd is not None else os.getcwd())
    if os.path.commonpath([absolute, base]) != base:
        return absolute
    relative = os.path.relpath(absolute, base)
    return relative if os.sep in relative else f".{os.sep}{relative}"
