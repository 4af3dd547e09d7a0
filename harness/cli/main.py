"""Command line: ``python -m harness <command>``.

Exit codes: 0 the guarantee held, 1 a violation was found, 2 the harness
could not produce a verdict (bad input, infrastructure error, a planned fault
that never fired). Errors are one readable paragraph, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.cli.common import fail as _fail
from harness.cli.run import add_run_arguments, cmd_list, cmd_run, parse_kill

__all__ = ["COMMANDS", "build_parser", "main", "parse_kill"]

#: Extra subcommands: name -> (add_arguments, handler). Other modules register here.
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]] = {}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_run_arguments(sub.add_parser("run", help="run a scenario under seeded kill/restart and check exactly-once"))
    sub.add_parser("list", help="list scenarios and crash points")
    for name, (help_text, add, _) in COMMANDS.items():
        add(sub.add_parser(name, help=help_text))
    return parser


def _register_inspect() -> None:
    """``inspect`` (harness/inspector/cli.py), imported only when the parser is built or it runs."""

    def add(p: argparse.ArgumentParser) -> None:
        from harness.inspector.cli import add_arguments

        add_arguments(p)
        p.add_argument(
            "--html", type=Path, default=None, metavar="PATH", help="draw the checkpoint's batches as an HTML page"
        )

    def handle(args: argparse.Namespace) -> int:
        from harness.inspector.cli import run

        code = run(args)
        if args.html is not None and code in (0, 1) and args.target[0] != "diff":
            from harness.timeline.page import write_checkpoint_page

            page = write_checkpoint_page(args.html, Path(args.target[0]), args.sink_dir)
            print(f"timeline: {page}", file=sys.stderr)
        return code

    COMMANDS.setdefault("inspect", ("read and check a streaming checkpoint; `inspect diff A B`", add, handle))


_register_inspect()


def _register_chaos() -> None:
    """``chaos`` and ``replay`` (harness/cli/chaos.py, imported lazily)."""
    from harness.cli import chaos as chaos_cli
    from harness.cli import replay as replay_cli

    COMMANDS.setdefault(
        "chaos",
        (
            "run a Hypothesis chaos campaign on a scenario; shrink and bundle a violation",
            chaos_cli.add_chaos_arguments,
            chaos_cli.cmd_chaos,
        ),
    )
    COMMANDS.setdefault(
        "replay",
        (
            "rerun a saved bundle and compare verdict and anomalies",
            replay_cli.add_replay_arguments,
            replay_cli.cmd_replay,
        ),
    )


_register_chaos()


def _register_conformance() -> None:
    """``check-source``, ``check-sink`` and ``certify`` (harness/conformance/cli.py, imported lazily)."""
    from harness.conformance import cli as conformance

    COMMANDS.setdefault(
        "check-source",
        (
            "check a Python streaming source against the conformance kit",
            conformance.add_check_source,
            conformance.cmd_check_source,
        ),
    )
    COMMANDS.setdefault(
        "check-sink",
        (
            "check a Python streaming sink or foreachBatch function against the conformance kit",
            conformance.add_check_sink,
            conformance.cmd_check_sink,
        ),
    )
    COMMANDS.setdefault(
        "certify",
        (
            "measure the guarantees of Spark's built-in sources and sinks under SIGKILLs vs the docs",
            conformance.add_certify,
            conformance.cmd_certify,
        ),
    )


_register_conformance()


def _register_bench() -> None:
    """``bench`` (harness/bench/suite.py, imported lazily)."""

    def add(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write all figures as JSON")
        p.add_argument("--quick", action="store_true", help="fewer repetitions (about half the time)")
        p.add_argument(
            "--only",
            default=None,
            metavar="S[,S]",
            help="measure only these sections: steady, restarts, chaos, inspector, steps, check, volume, kafka "
            "(default: all)",
        )

    def handle(args: argparse.Namespace) -> int:
        from harness.bench.render import render_bench
        from harness.bench.suite import SECTIONS, run_bench

        only = tuple(x for x in (args.only or ",".join(SECTIONS)).split(",") if x)
        unknown = [x for x in only if x not in SECTIONS]
        if unknown or not only:
            print(f"harness: bench --only {args.only!r}: choose from {', '.join(SECTIONS)}", file=sys.stderr)
            return 2
        doc = run_bench(quick=args.quick, echo=lambda m: print(m, file=sys.stderr, flush=True), only=only)
        print(render_bench(doc))
        if args.json:
            args.json.write_text(json.dumps(doc, indent=2))
        return 0

    COMMANDS.setdefault("bench", ("measure the harness against bare Spark (ratios, restarts, chaos rate)", add, handle))


_register_bench()
COMMANDS.setdefault(
    "census",
    ("print the steps of a sink's own code in a fault-free run (where sink.step kills can land)",
     lambda p: __import__("harness.cli.census", fromlist=["x"]).add_arguments(p),
     lambda a: __import__("harness.cli.census", fromlist=["x"]).cmd_census(a)),
)  # fmt: skip
COMMANDS.setdefault(
    "merge",
    ("combine the results of a campaign's shards (chaos --shard I/N --json) into one verdict, JSON and HTML",
     lambda p: __import__("harness.cli.merge", fromlist=["x"]).add_arguments(p),
     lambda a: __import__("harness.cli.merge", fromlist=["x"]).cmd_merge(a)),
)  # fmt: skip
COMMANDS.setdefault(
    "upgrade-check",
    ("can the next version of a pipeline resume from this checkpoint? (0 yes, 1 no, 2 risk or no answer)",
     lambda p: __import__("harness.cli.upgrade_check", fromlist=["x"]).add_arguments(p),
     lambda a: __import__("harness.cli.upgrade_check", fromlist=["x"]).cmd_upgrade_check(a)),
)  # fmt: skip
COMMANDS.setdefault(
    "setup",
    ("fetch the jars (Kafka connector, Delta, test broker, your --packages) for the installed PySpark into "
     "the cache and build the driver's class-data archive; a no-op when complete",
     lambda p: __import__("harness.cli.setup", fromlist=["x"]).add_arguments(p),
     lambda a: __import__("harness.cli.setup", fromlist=["x"]).cmd_setup(a)),
)  # fmt: skip
COMMANDS.setdefault(
    "cds",
    ("build the driver's JVM class-data archive if missing (set-up does this)", lambda p: None,
     lambda a: __import__("harness.spark.cds_build", fromlist=["main"]).main([])),
)  # fmt: skip


#: Commands whose runs put Spark's files under a directory the user gives or the temporary directory.
_RUNS_SPARK = frozenset(
    {"run", "chaos", "replay", "check-source", "check-sink", "certify", "census", "upgrade-check", "bench"}
)


def _directory_problem(args: argparse.Namespace) -> str | None:
    """A directory option (or, for a command that runs Spark, the temporary directory its default run
    directories go to) Spark cannot use, in one line naming the character (:func:`path_problem`)."""
    import tempfile

    from harness.engine.rundir import path_problem

    for name in ("run_dir", "work_dir", "keep", "work"):
        value = getattr(args, name, None)
        if isinstance(value, Path) and (problem := path_problem(value, f"--{name.replace('_', '-')}")):
            return problem
    if args.command in _RUNS_SPARK:
        return path_problem(Path(tempfile.gettempdir()), "the temporary directory (TMPDIR)")
    return None


#: Commands that start no Spark and read nothing release-specific: not refused on a PySpark outside the range.
SPARK_FREE = frozenset({"list", "inspect", "merge"})


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from harness.spark.project import load_project_settings

    try:  # the project's harness_* ini options, as its pytest run reads them (harness.spark.project)
        load_project_settings()
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    if problem := _directory_problem(args):
        return _fail(problem)
    from harness.spark.releases import unsupported

    # The checkpoint reader and the listings start no Spark: they serve any PySpark.
    if args.command not in SPARK_FREE and (outside := unsupported()):
        return _fail(outside)
    from fault_injectors.plugins import PluginError, plugin_actions

    try:  # a broken plugin is refused before any work, as pytest refuses one (loaded once per process)
        plugin_actions()
    except PluginError as exc:
        return _fail(str(exc))
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {"run": cmd_run, "list": cmd_list}
    handlers.update({name: h for name, (_, _, h) in COMMANDS.items()})
    from harness.errors import SetupError, UsageError

    try:
        return handlers[args.command](args)
    except (UsageError, SetupError) as exc:  # a refusal its command did not word: one line all the same
        return _fail(str(exc))
    except KeyboardInterrupt:
        return _fail("interrupted; child processes were killed")


if __name__ == "__main__":
    sys.exit(main())
