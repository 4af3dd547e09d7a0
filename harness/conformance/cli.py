"""``python -m harness check-source | check-sink | certify`` (registered in ``harness/cli/commands.py``).

Exit codes: 0 conforming (certify: every row measured, none contradicts its
documentation), 1 violations (certify: a contradiction), 2 could not run (bad
input, a check that could not run, certify: a row not measured). Input errors
are one line naming the argument and what to do.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _fail(message: str) -> int:
    print(f"harness: {message}", file=sys.stderr)
    return 2


def _echo(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _ids(text: str | None) -> list[str]:
    return [s.strip() for s in (text or "").split(",") if s.strip()]


def _write_json(path: Path | None, doc: Any) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc, indent=2, default=str))


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
            cls, options, context, ref=ref, workdir=args.keep, skip=_ids(args.skip), kills=args.kills, echo=_echo
        )
    except (LoadError, TypeError, ValueError) as exc:
        return _fail(str(exc).splitlines()[0])
    print(report.render_text())
    _write_json(args.json, report.to_json())
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
        points = tuple(_ids(args.points)) or SINK_POINTS
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
            skip=_ids(args.skip),
            seed=args.seed,
            steps=args.steps,
            wrappers=_wrappers(args.wrappers),
            echo=_echo,
            every_step=args.every_step,
            batch_rows=args.batch_rows,
        )
    except (LoadError, TypeError, ValueError) as exc:
        return _fail(str(exc).splitlines()[0])
    print(report.render_text())
    _write_json(args.json, report.to_json())
    return report.exit_code


def _wrappers(text: str | None) -> tuple[str, ...]:
    from fault_injectors.plan import WRAPPERS

    names = tuple(_ids(text))
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


def add_certify(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the table and timelines as JSON")
    p.add_argument("--html", type=Path, default=None, metavar="PATH", help="write the HTML report with timelines")
    p.add_argument("--only", default=None, metavar="KEY[,KEY]", help="measure only these rows (see --list)")
    p.add_argument("--list", action="store_true", help="list the rows and their documented guarantees, run nothing")
    p.add_argument("--seed", type=int, default=1, help="seed of the sink runs' data")
    p.add_argument("--keep", type=Path, default=None, metavar="DIR", help="keep every run directory here")
    p.add_argument(
        "--pyspark",
        type=Path,
        default=None,
        metavar="PYTHON",
        help="measure on the PySpark of another environment: PYTHON is its interpreter, the harness installed "
        "there (bin/test-matrix builds one per release)",
    )
    p.add_argument(
        "--upgrades",
        action="store_true",
        help="measure the programming guide's recovery table instead: per row, a pipeline pair deployed over a "
        "live checkpoint under SIGKILLs, and upgrade-check's answer before it",
    )
    p.add_argument(
        "--save-fixtures",
        type=Path,
        default=None,
        metavar="DIR",
        help="with --upgrades: save each row's checkpoint files, upgrade-check probe and verdict here",
    )


def _certify_upgrades(args: argparse.Namespace) -> int:
    """``certify --upgrades`` (:mod:`harness.conformance.certify.upgrades`); exit as ``certify``: 1 a row
    differs from the guide, 2 a row not measured, else 0."""
    import pyspark

    from harness.conformance.certify.html import render_html
    from harness.conformance.certify.upgrades import UPGRADE_KEYS, UPGRADE_ROWS, render_upgrades, run_upgrades
    from harness.verdict.guide import row

    if args.list:
        for r in UPGRADE_ROWS:
            rule = row(r.rule)
            print(f"{r.key:<28} {rule.category:<22} {rule.change}  [{r.scenario}]")
        return 0
    only = _ids(args.only) or None
    unknown = sorted(set(only or ()) - set(UPGRADE_KEYS))
    if unknown:
        return _fail(f"--only {unknown}: unknown upgrade row(s); known: {', '.join(UPGRADE_KEYS)}")
    if args.keep is not None and args.keep.is_dir() and any(args.keep.iterdir()):
        return _fail(f"--keep {args.keep} is not empty; give a new directory or remove it")
    work = args.keep or Path(tempfile.mkdtemp(prefix="harness-certify-upgrades-"))
    t0 = time.monotonic()
    rows = run_upgrades(only, Path(work), seed=args.seed, echo=_echo, fixtures=args.save_fixtures)
    total = time.monotonic() - t0
    print(render_upgrades(rows, total))
    meta = (
        f"PySpark {pyspark.__version__}, local[2]; per row: version 1 alone, upgrade-check, then the deploy "
        f"after a SIGKILL with one more after it; {len(rows)} row(s) in {total:.0f} s; seed {args.seed}"
    )
    _write_json(args.json, {"rows": rows, "duration_s": round(total, 1), "meta": meta})
    if args.html is not None:
        args.html.parent.mkdir(parents=True, exist_ok=True)
        args.html.write_text(render_html("Changes over a live checkpoint: the guide vs measured", meta, rows, {}))
    if args.keep is None:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    if any(r["status"] == "not measured" for r in rows):
        return 2
    return 1 if any(r["status"] != "agrees" for r in rows) else 0


def cmd_certify(args: argparse.Namespace) -> int:
    if args.pyspark is not None:  # before anything of this environment's Spark is imported
        from harness.conformance.certify.elsewhere import certify_under

        return certify_under(args.pyspark, args, _echo)
    import pyspark

    from harness.conformance.certify.command import ROW_KEYS, ROWS, exit_code, render_table, run_certify
    from harness.conformance.certify.documented import DOCUMENTED
    from harness.conformance.certify.html import render_html

    if args.upgrades:
        return _certify_upgrades(args)
    if args.save_fixtures is not None:
        return _fail("--save-fixtures applies only with --upgrades")
    if args.list:
        for r in ROWS:
            d = DOCUMENTED[r.key]
            print(f"{r.key:<32} {d.level:<14} {d.quote}  [{d.where}]")
        return 0
    only = _ids(args.only) or None
    unknown = sorted(set(only or ()) - set(ROW_KEYS))
    if unknown:
        return _fail(f"--only {unknown}: unknown row(s); known: {', '.join(ROW_KEYS)}")
    if args.keep is not None and args.keep.is_dir() and any(args.keep.iterdir()):
        return _fail(f"--keep {args.keep} is not empty; give a new directory or remove it")
    work = args.keep or Path(tempfile.mkdtemp(prefix="harness-certify-"))
    t0 = time.monotonic()
    rows, timelines = run_certify(only, Path(work), seed=args.seed, keep=args.keep is not None, echo=_echo)
    total = time.monotonic() - t0
    print(render_table(rows, total))
    meta = (
        f"PySpark {pyspark.__version__}, local[2]; one run per row with real SIGKILLs; {len(rows)} row(s) "
        f"in {total:.0f} s; seed {args.seed}"
    )
    _write_json(
        args.json,
        {
            "rows": rows,
            "duration_s": round(total, 1),
            "meta": meta,
            "timelines": {k: t.to_json() for k, t in timelines.items()},
        },
    )
    if args.html is not None:
        args.html.parent.mkdir(parents=True, exist_ok=True)
        args.html.write_text(
            render_html("Structured Streaming guarantees: documented vs measured", meta, rows, timelines)
        )
    if args.keep is None:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return exit_code(rows)
