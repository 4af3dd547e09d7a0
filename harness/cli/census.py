"""``python -m harness census SCENARIO | --sink FILE:FACTORY --read-back FILE:FUNCTION``.

Runs the pipeline once without faults, every wrapped sink call traced, and
prints each batch's steps per wrapper: the places a ``sink.step`` kill can
land. Exit 0 with a census, 2 when none could be taken (the message says why).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from harness.engine.commandline import harness_command


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", nargs="?", default=None, help="a scenario (name or package.module:ATTRIBUTE)")
    p.add_argument("--sink", default=None, metavar="FILE:OBJ", help="a sink under test, as check-sink takes it")
    p.add_argument("--read-back", default=None, metavar="FILE:FUNCTION", help="with --sink: its read-back function")
    p.add_argument(
        "--option", dest="options", action="append", default=[], metavar="KEY=VALUE",
        help="with --sink: a sink option (repeatable)",
    )  # fmt: skip
    # The older spelling `--options K=V ...`, hidden; it goes in the next release.
    p.add_argument("--options", dest="options", nargs="*", action="extend", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=None, help="seed of the data (default: random, printed)")
    p.add_argument("--rounds", type=int, default=1, help="add-data/run rounds (default 1)")
    p.add_argument("--all", action="store_true", help="print every step (default: the first 40 per call)")
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the census as JSON here")
    p.add_argument("--run-dir", type=Path, default=None, metavar="DIR", help="keep the census run here")


def cmd_census(args: argparse.Namespace) -> int:
    from harness.chaos.census import CensusError, take_census
    from harness.engine.runner import HarnessError

    def fail(message: str) -> int:
        print(f"harness: {message}", file=sys.stderr)
        return 2

    if (args.scenario is None) == (args.sink is None):
        return fail("census: name a scenario, or give --sink FILE:OBJ --read-back FILE:FUNCTION (not both)")
    if args.rounds < 1:
        return fail("census: --rounds must be >= 1")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    print(f"seed {seed}; replay: {_replay(args, seed)}", file=sys.stderr, flush=True)
    try:
        if args.sink is not None:
            census = _sink_census(args, seed)
        else:
            from scenarios import get_scenario

            get_scenario(args.scenario)
            census = take_census(args.scenario, seed, rounds=args.rounds, run_dir=args.run_dir)
    except KeyError as exc:
        return fail(str(exc.args[0]))
    except (CensusError, HarnessError, ValueError, TypeError) as exc:
        return fail(str(exc).splitlines()[0])
    print(census.render(None if args.all else 40))
    if args.json:
        doc = {
            "scenario": census.scenario,
            "seed": census.seed,
            "calls": [
                {"wrapper": w, "batch": b, "partition": p, "steps": list(c.steps)}
                for (w, b, p), c in census.calls.items()
            ],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2))
    return 0 if census.calls else 2


def _sink_census(args: argparse.Namespace, seed: int):  # type: ignore[no-untyped-def]
    from harness.chaos.census import take_census
    from harness.conformance.sink.scenario import exported, sink_config
    from harness.sources.loading import LoadError, load, parse_options

    if not args.read_back:
        raise ValueError("census --sink needs --read-back FILE:FUNCTION (the rows the sink's readers see)")
    try:
        target, t_ref = load(args.sink, "--sink")
        _, r_ref = load(args.read_back, "--read-back")
        config = sink_config(target, t_ref, r_ref, parse_options(args.options))
    except LoadError as exc:
        raise ValueError(str(exc)) from None
    with exported(config) as ref:
        census = take_census(ref, seed, rounds=args.rounds, run_dir=args.run_dir)
    return type(census)(t_ref.spec, census.seed, census.calls)


def _replay(args: argparse.Namespace, seed: int) -> str:
    what = [args.scenario] if args.scenario else ["--sink", args.sink, "--read-back", args.read_back]
    extra = [a for o in args.options for a in ("--option", o)]
    return harness_command("census", *what, *extra, "--seed", seed, "--rounds", args.rounds)
