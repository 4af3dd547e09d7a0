"""One spelling of connector options on every command: ``--option KEY=VALUE``, repeatable; the older
``--options K=V ...`` still parses (hidden) for one release; ``run``'s help names
``module:ATTRIBUTE``."""

from __future__ import annotations

import argparse

import pytest

from harness.cli.main import build_parser

SINK = ["--read-back", "r.py:f"]
COMMANDS = {
    "check-source": ["check-source", "s.py:S"],
    "check-sink": ["check-sink", "s.py:S", *SINK],
    "census": ["census", "--sink", "s.py:S", *SINK],
    "chaos": ["chaos", "--source", "s.py:S"],
}


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found: argparse.ArgumentParser = sub.choices[name]
    return found


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_option_is_repeatable_on_every_command(command: str) -> None:
    args = build_parser().parse_args([*COMMANDS[command], "--option", "a=1", "--option", "b=x=y"])
    assert args.options == ["a=1", "b=x=y"]
    assert "--option KEY=VALUE" in _subparser(command).format_help()


@pytest.mark.parametrize("command", ["check-source", "check-sink", "census"])
def test_the_older_options_spelling_still_works_hidden(command: str) -> None:
    argv = [*COMMANDS[command], "--options", "a=1", "b=2", "--option", "c=3"]
    args = build_parser().parse_args(argv)
    assert args.options == ["a=1", "b=2", "c=3"]
    assert "--options" not in _subparser(command).format_help()


def test_run_takes_your_own_scenario_by_module_attribute() -> None:
    text = " ".join(_subparser("run").format_help().split())
    assert "package.module:ATTRIBUTE" in text and "a built-in scenario (" not in text
