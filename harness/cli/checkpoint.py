"""``inspect``: the checkpoint inspector's command (:mod:`harness.inspector.cli`) with ``--html``, its batches
drawn as a page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    from harness.inspector.cli import add_arguments as add_inspector_arguments

    add_inspector_arguments(p)
    p.add_argument(
        "--html", type=Path, default=None, metavar="PATH", help="draw the checkpoint's batches as an HTML page"
    )


def cmd_inspect(args: argparse.Namespace) -> int:
    from harness.inspector.cli import run

    code = run(args)
    if args.html is not None and code in (0, 1) and args.target[0] != "diff":
        from harness.timeline.page import write_checkpoint_page

        page = write_checkpoint_page(args.html, Path(args.target[0]), args.sink_dir)
        print(f"timeline: {page}", file=sys.stderr)
    return code
