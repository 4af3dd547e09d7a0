"""Command line: ``python -m harness <command>``.

Exit codes: 0 the guarantee held, 1 a violation was found, 2 the harness
could not produce a verdict (bad input, infrastructure error, a planned fault
that never fired), 141 the reader of its output went away (``| head``).
Errors are one readable paragraph, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

from harness.cli.commands import COMMANDS, Command, register
from harness.cli.common import fail as _fail

__all__ = ["COMMANDS", "Command", "build_parser", "main", "register"]


def build_parser(only: Collection[str] | None = None, epilog: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; with ``only``, those commands' alone (their options' modules are the only ones
    imported); ``epilog`` ends the help."""
    parser = argparse.ArgumentParser(prog="python -m harness", description=__doc__.splitlines()[0], epilog=epilog)
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS.values():
        if only is None or command.name in only:
            command.add(sub.add_parser(command.name, help=command.help))
    return parser


def _outside_range(argv: Sequence[str]) -> tuple[str | None, tuple[str, ...]]:
    """Why the installed PySpark is outside the supported range (None inside it), and the commands that may
    still run there: those that need nothing of PySpark 4 (``starts_spark`` false: the checkpoint reader, the
    merge of shard results). An empty tuple: the command asked for is not one of them. Decided before any
    parser is built, since the options of the others import modules an older PySpark lacks; the release is
    read from pyspark's metadata, nothing of it imported."""
    from harness.spark.releases import unsupported

    outside = unsupported()
    if outside is None:
        return None, ()
    allowed = tuple(c.name for c in COMMANDS.values() if not c.starts_spark)
    name = next((arg for arg in argv if not arg.startswith("-")), None)
    # No command (``--help``, say): the help of those that run here, saying why the others are missing.
    return outside, (allowed if name is None or name in allowed else ())


def _directory_problem(args: argparse.Namespace) -> str | None:
    """A directory option (or, for a command that runs Spark, the temporary directory its default run
    directories go to) Spark cannot use, in one line naming the character (:func:`path_problem`)."""
    import tempfile

    from harness.engine.rundir import path_problem

    for name in ("run_dir", "work_dir", "keep", "work"):
        value = getattr(args, name, None)
        if isinstance(value, Path) and (problem := path_problem(value, f"--{name.replace('_', '-')}")):
            return problem
    if COMMANDS[args.command].spark_dirs:
        return path_problem(Path(tempfile.gettempdir()), "the temporary directory (TMPDIR)")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError as exc:
        if not _stdout_gone():  # another pipe (a child's, a socket's): a failure like any other
            return _fail(f"a pipe closed under the command: {exc}")
        # The reader of stdout went away (``harness certify --list | head``): point stdout at devnull so the
        # interpreter's last flush cannot raise again (Python's advice), and end as a pipe's writer does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _stdout_gone() -> bool:
    """Whether stdout is a pipe whose reader has closed it (its write end polls as an error)."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poll.poll(0))
    except (OSError, ValueError):
        return False


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    outside, only = _outside_range(argv)
    if outside is not None and not only:
        return _fail(outside)
    note = f"{outside}. Here only these run: {', '.join(only)}." if outside is not None else None
    args = build_parser(only or None, epilog=note).parse_args(argv)
    from harness.spark.project import load_project_settings

    try:  # the project's harness_* ini options, as its pytest run reads them (harness.spark.project)
        load_project_settings()
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    if problem := _directory_problem(args):
        return _fail(problem)
    from fault_injectors.plugins import PluginError, plugin_actions

    try:  # a broken plugin is refused before any work, as pytest refuses one (loaded once per process)
        plugin_actions()
    except PluginError as exc:
        return _fail(str(exc))
    from harness.errors import SetupError, UsageError

    try:
        return COMMANDS[args.command].run(args)
    except (UsageError, SetupError) as exc:  # a refusal its command did not word: one line all the same
        return _fail(str(exc))
    except KeyboardInterrupt:
        return _fail("interrupted; child processes were killed")


if __name__ == "__main__":
    sys.exit(main())
