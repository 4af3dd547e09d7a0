"""``bench``: the harness measured against bare Spark (:mod:`harness.bench.suite`), as text and JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write all figures as JSON")
    p.add_argument("--quick", action="store_true", help="fewer repetitions (about half the time)")
    p.add_argument(
        "--only",
        default=None,
        metavar="S[,S]",
        help="measure only these sections: steady, restarts, chaos, inspector, steps, check, volume, kafka, "
        "sinkcheck (default: all)",
    )


def cmd_bench(args: argparse.Namespace) -> int:
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
