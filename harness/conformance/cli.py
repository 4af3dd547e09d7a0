"""``python -m harness check-source | check-sink`` (registered in ``harness/cli/commands.py``; ``certify``'s front
end is :mod:`harness.conformance.certify.cli`).

Exit codes: 0 conforming, 1 violations, 2 could not run (bad input, a check that could not run). Input errors
are one line naming the argument and what to do.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.conformance.output import echo, fail, ids, write_json


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--option", dest="options", action="append", default=[], metavar="KEY=VALUE",
        help="a connector option (repeatable)",
    )  # fmt: skip
    # The older spelling `--options K=V ...`, hidden; it goes in the next release.
    p.add_argument("--options", dest="options", nargs="*", action="extend", help=argparse.SUPPRESS)
    p.add_argument("--skip", default=None, metavar="ID[,ID]", help="check ids to leave out")
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the report as JSON here")
    p.add_argument("--keep", type=Path, default=None, metavar="DIR", help="work directory to keep (default: temp)")


def add_check_source(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", help="path/to/module.py:DataSourceClass (or package.module:Class)")
    p.add_argument(
        "--context",
        default=None,
        metavar="MODULE:FACTORY",
        help="external context factory feeding the source test data (default: none)",
    )
    p.add_argument("--kills", type=int, default=2, help="SIGKILLs in the end-to-end check (default 2)")
    _common(p)


def cmd_check_source(args: argparse.Namespace) -> int:
    from harness.conformance.source.suite import check_source
    from harness.sources.loading import LoadError, load, parse_options

    try:
        cls, ref = load(args.source, "source")
        context = load(args.context, "--context")[0] if args.context else None
        options = parse_options(args.options)
        if args.kills < 0:
            raise LoadError("--kills must be >= 0")
        report = check_source(
            cls, options, context, ref=ref, workdir=args.keep, skip=ids(args.skip), kills=args.kills, echo=echo
        )
    except (LoadError, TypeError, ValueError) as exc:
        return fail(str(exc).splitlines()[0])
    print(report.render_text())
    write_json(args.json, report.to_json())
    return report.exit_code


def add_check_sink(p: argparse.ArgumentParser) -> None:
    from harness.conformance.sink.campaign import MODES

    p.add_argument("sink", help="path/to/module.py:DataSourceClass, or a foreachBatch factory factory(path, **options)")
    p.add_argument(
        "--read-back",
        required=True,
        metavar="MODULE:FUNCTION",
        help="function(path) -> rows (dicts) the sink has made visible to its readers",
    )
    p.add_argument(
        "--guarantee",
        default="exactly-once",
        choices=("exactly-once", "at-least-once"),
        help="the guarantee the sink declares (default exactly-once)",
    )
    p.add_argument(
        "--faults",
        default="mixed",
        choices=MODES,
        help="crash-points campaign: mixed (SIGKILL at sink.write.mid and sink.commit.after, exceptions "
        "elsewhere; default), soft (exceptions only), hard (SIGKILL everywhere)",
    )
    p.add_argument("--points", default=None, metavar="POINT[,POINT]", help="crash points (default: all a sink reaches)")
    p.add_argument(
        "--steps",
        type=_steps,
        default=30,
        metavar="N|all",
        help="crash-anywhere: a fault at each effect boundary of a census batch of the sink's own code (the step "
        "before its first effect and every effect), a seeded sample when there are more than N (default 30; "
        "'all': every boundary)",
    )
    p.add_argument(
        "--every-step",
        action="store_true",
        help="crash-anywhere: aim at every step, effect-free ones too, instead of the effect boundaries "
        "(--steps still caps them)",
    )
    p.add_argument(
        "--batch-rows",
        type=_batch_rows,
        default=None,
        metavar="N",
        help="crash-anywhere: rows in each batch of its census and fault runs (default 20)",
    )
    p.add_argument(
        "--wrappers",
        default=None,
        metavar="W[,W]",
        help="crash-anywhere: aim only at these wrapped functions (foreach_batch, write, commit, abort)",
    )
    p.add_argument("--seed", type=int, default=5, help="seed of the campaign's data")
    _common(p)


def cmd_check_sink(args: argparse.Namespace) -> int:
    from harness.conformance.sink.scenario import SINK_POINTS
    from harness.conformance.sink.suite import check_sink
    from harness.sources.loading import LoadError, load, parse_options

    try:
        target, t_ref = load(args.sink, "sink")
        read_back, r_ref = load(args.read_back, "--read-back")
        if not callable(read_back):
            raise LoadError(f"--read-back {args.read_back!r} is not a function of the sink's path")
        points = tuple(ids(args.points)) or SINK_POINTS
        report = check_sink(
            target,
            read_back,
            parse_options(args.options),
            guarantee=args.guarantee,
            faults=args.faults,
            points=points,
            target_ref=t_ref,
            read_back_ref=r_ref,
            workdir=args.keep,
            skip=ids(args.skip),
            seed=args.seed,
            steps=args.steps,
            wrappers=_wrappers(args.wrappers),
            echo=echo,
            every_step=args.every_step,
            batch_rows=args.batch_rows,
        )
    except (LoadError, TypeError, ValueError) as exc:
        return fail(str(exc).splitlines()[0])
    print(report.render_text())
    write_json(args.json, report.to_json())
    return report.exit_code


def _wrappers(text: str | None) -> tuple[str, ...]:
    from fault_injectors.plan import WRAPPERS

    names = tuple(ids(text))
    unknown = sorted(set(names) - set(WRAPPERS))
    if unknown:
        raise ValueError(f"--wrappers {unknown}: known wrapped functions are {', '.join(WRAPPERS)}")
    return names


def _steps(text: str) -> int | None:
    if text == "all":
        return None
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--steps {text!r}: a whole number >= 1, or 'all'") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"--steps {text!r}: a whole number >= 1, or 'all'")
    return n


def _batch_rows(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"--batch-rows {text!r}: a whole number >= 1")
    return n
