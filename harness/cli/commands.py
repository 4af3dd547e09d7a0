"""The commands of ``python -m harness``: one registry, one entry per command.

A command is a name, a help line, where its argument builder and its handler live (``module:function``,
imported when the parser is built or the command runs, not when :mod:`harness.cli.main` is imported) and
what it needs of the machine: whether it needs PySpark 4 (``starts_spark``: it starts Spark or loads the
scenario library; a PySpark outside the supported range is refused first) and whether its runs put Spark's
files under a directory (checked for characters Spark's paths cannot hold before any work). :func:`register`
adds one; the order of registration is the order of ``--help``.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["COMMANDS", "Command", "register"]


def _load(ref: str) -> Callable[..., Any]:
    module, _, name = ref.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found


@dataclass(frozen=True)
class Command:
    """One command. ``add_arguments`` and ``handler`` are ``module:function`` references: ``function(parser)``
    adds the command's options, ``function(args) -> int`` runs it and returns the exit code (0 held, 1 a
    violation, 2 no verdict). ``starts_spark``: it starts Spark or loads what needs PySpark 4 (the scenario
    library): refused on a PySpark outside the supported range;
    ``spark_dirs``: its default run directories go under the temporary directory, which must suit Spark."""

    name: str
    help: str
    add_arguments: str | None
    handler: str
    starts_spark: bool = True
    spark_dirs: bool = False

    def add(self, parser: argparse.ArgumentParser) -> None:
        if self.add_arguments is not None:
            _load(self.add_arguments)(parser)

    def run(self, args: argparse.Namespace) -> int:
        code: int = _load(self.handler)(args)
        return code


#: Every command, by name, in the order ``--help`` lists them.
COMMANDS: dict[str, Command] = {}


def register(command: Command) -> Command:
    """Add ``command`` (a second one of the same name is refused: two handlers for one name is a bug)."""
    if command.name in COMMANDS:
        raise ValueError(f"command {command.name!r} is registered twice")
    COMMANDS[command.name] = command
    return command


_SPARK_RUNS = {"starts_spark": True, "spark_dirs": True}
for _command in (
    Command("run", "run a scenario under seeded kill/restart and check exactly-once",
            "harness.cli.run:add_run_arguments", "harness.cli.run:cmd_run", **_SPARK_RUNS),
    # The listing starts no Spark, but the scenario library it loads is written against PySpark 4's data source API.
    Command("list", "list scenarios and crash points", None, "harness.cli.run:cmd_list"),
    Command("inspect", "read and check a streaming checkpoint; `inspect diff A B`",
            "harness.cli.checkpoint:add_arguments", "harness.cli.checkpoint:cmd_inspect", starts_spark=False),
    Command("chaos", "run a Hypothesis chaos campaign on a scenario; shrink and bundle a violation",
            "harness.cli.chaos:add_chaos_arguments", "harness.cli.chaos:cmd_chaos", **_SPARK_RUNS),
    Command("replay", "rerun a saved bundle and compare verdict and anomalies",
            "harness.cli.replay:add_replay_arguments", "harness.cli.replay:cmd_replay", **_SPARK_RUNS),
    Command("check-source", "check a Python streaming source against the conformance kit",
            "harness.conformance.cli:add_check_source", "harness.conformance.cli:cmd_check_source", **_SPARK_RUNS),
    Command("check-sink", "check a Python streaming sink or foreachBatch function against the conformance kit",
            "harness.conformance.cli:add_check_sink", "harness.conformance.cli:cmd_check_sink", **_SPARK_RUNS),
    Command("certify", "measure the guarantees of Spark's built-in sources and sinks under SIGKILLs vs the docs",
            "harness.conformance.certify.cli:add_certify", "harness.conformance.certify.cli:cmd_certify",
            **_SPARK_RUNS),
    Command("bench", "measure the harness against bare Spark (ratios, restarts, chaos rate)",
            "harness.cli.bench:add_arguments", "harness.cli.bench:cmd_bench", **_SPARK_RUNS),
    Command("census", "print the steps of a sink's own code in a fault-free run (where sink.step kills can land)",
            "harness.cli.census:add_arguments", "harness.cli.census:cmd_census", **_SPARK_RUNS),
    Command("merge", "combine the results of a campaign's shards (chaos --shard I/N --json) into one verdict, "
            "JSON and HTML", "harness.cli.merge:add_arguments", "harness.cli.merge:cmd_merge", starts_spark=False),
    Command("upgrade-check", "can the next version of a pipeline resume from this checkpoint? (0 yes, 1 no, 2 risk "
            "or no answer)", "harness.cli.upgrade_check:add_arguments", "harness.cli.upgrade_check:cmd_upgrade_check",
            **_SPARK_RUNS),
    Command("setup", "fetch the jars (Kafka connector, Delta, test broker, your --packages) for the installed "
            "PySpark into the cache and build the driver's class-data archive; a no-op when complete",
            "harness.cli.setup:add_arguments", "harness.cli.setup:cmd_setup"),
    Command("cds", "build the driver's JVM class-data archive if missing (set-up does this)", None,
            "harness.cli.setup:cmd_cds"),
):  # fmt: skip
    register(_command)
