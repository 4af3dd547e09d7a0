"""``python -m harness certify`` (registered in ``harness/cli/commands.py``): Spark's documented guarantees
measured row by row (the rest of :mod:`harness.conformance.certify`), or with ``--upgrades`` the guide's recovery table.

Exit codes: 0 every row measured and none contradicts its documentation, 1 a contradiction, 2 a row not
measured or bad input (one line naming the argument and what to do).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.conformance.output import echo, fail, ids, write_json


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


def _selection(
    args: argparse.Namespace, known: Sequence[str], what: str, prefix: str
) -> tuple[list[str] | None, Path] | str:
    """The rows ``--only`` asks for (None: all) and the work directory (``--keep``, else a new temporary one); the
    one-line refusal instead when a key is not one of ``known`` (``what``: the kind of row) or ``--keep`` is not
    empty."""
    only = ids(args.only) or None
    unknown = sorted(set(only or ()) - set(known))
    if unknown:
        return f"--only {unknown}: unknown {what}(s); known: {', '.join(known)}"
    if args.keep is not None and args.keep.is_dir() and any(args.keep.iterdir()):
        return f"--keep {args.keep} is not empty; give a new directory or remove it"
    return only, Path(args.keep or tempfile.mkdtemp(prefix=prefix))


def _finish(args: argparse.Namespace, work: Path, html: Callable[[], str]) -> None:
    """Write the HTML report where ``--html`` asks; remove the work directory unless ``--keep`` named it."""
    if args.html is not None:
        args.html.parent.mkdir(parents=True, exist_ok=True)
        args.html.write_text(html())
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


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
    chosen = _selection(args, UPGRADE_KEYS, "upgrade row", "harness-certify-upgrades-")
    if isinstance(chosen, str):
        return fail(chosen)
    only, work = chosen
    t0 = time.monotonic()
    rows = run_upgrades(only, work, seed=args.seed, echo=echo, fixtures=args.save_fixtures)
    total = time.monotonic() - t0
    print(render_upgrades(rows, total))
    meta = (
        f"PySpark {pyspark.__version__}, local[2]; per row: version 1 alone, upgrade-check, then the deploy "
        f"after a SIGKILL with one more after it; {len(rows)} row(s) in {total:.0f} s; seed {args.seed}"
    )
    write_json(args.json, {"rows": rows, "duration_s": round(total, 1), "meta": meta})
    _finish(args, work, lambda: render_html("Changes over a live checkpoint: the guide vs measured", meta, rows, {}))
    if any(r["status"] == "not measured" for r in rows):
        return 2
    return 1 if any(r["status"] != "agrees" for r in rows) else 0


def cmd_certify(args: argparse.Namespace) -> int:
    if args.pyspark is not None:  # before anything of this environment's Spark is imported
        from harness.conformance.certify.elsewhere import certify_under

        return certify_under(args.pyspark, args, echo)
    import pyspark

    from harness.conformance.certify.command import ROW_KEYS, ROWS, exit_code, render_table, run_certify
    from harness.conformance.certify.documented import DOCUMENTED
    from harness.conformance.certify.html import render_html

    if args.upgrades:
        return _certify_upgrades(args)
    if args.save_fixtures is not None:
        return fail("--save-fixtures applies only with --upgrades")
    if args.list:
        for r in ROWS:
            d = DOCUMENTED[r.key]
            print(f"{r.key:<32} {d.level:<14} {d.quote}  [{d.where}]")
        return 0
    chosen = _selection(args, ROW_KEYS, "row", "harness-certify-")
    if isinstance(chosen, str):
        return fail(chosen)
    only, work = chosen
    t0 = time.monotonic()
    rows, timelines = run_certify(only, work, seed=args.seed, keep=args.keep is not None, echo=echo)
    total = time.monotonic() - t0
    print(render_table(rows, total))
    meta = (
        f"PySpark {pyspark.__version__}, local[2]; one run per row with real SIGKILLs; {len(rows)} row(s) "
        f"in {total:.0f} s; seed {args.seed}"
    )
    write_json(
        args.json,
        {
            "rows": rows,
            "duration_s": round(total, 1),
            "meta": meta,
            "timelines": {k: t.to_json() for k, t in timelines.items()},
        },
    )
    _finish(
        args,
        work,
        lambda: render_html("Structured Streaming guarantees: documented vs measured", meta, rows, timelines),
    )
    return exit_code(rows)
