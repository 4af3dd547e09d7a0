"""The command line every generated docs page shares: ``--write`` rewrites the page from the code, ``--check``
exits 1 when the page on disk is not the code's (each page's unit test runs it), 2 when the page cannot be made.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def table_cell(text: str) -> str:
    """``text`` as one Markdown table cell: one line, a ``|`` escaped (it would split the row)."""
    return " ".join(text.split()).replace("|", "\\|")


def page_main(
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str | None,
    page: Path,
    render: Callable[[], str],
    command: str,
    refused: tuple[type[Exception], ...] = (ValueError,),
) -> int:
    """Parse ``argv`` and write or check ``page`` against ``render()``; an exception of ``refused`` raised while
    rendering is printed in one line (exit 2). ``command`` is what the stale message tells the user to run."""
    shown = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
    parser = argparse.ArgumentParser(prog=prog, description=description)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help=f"rewrite {shown}")
    mode.add_argument("--check", action="store_true", help="exit 1 if the page is not the code's")
    args = parser.parse_args(argv)
    try:
        text = render()
    except refused as exc:
        print(f"harness: {shown}: {exc}", file=sys.stderr)
        return 2
    if args.write:
        page.write_text(text)
        return 0
    if page.exists() and page.read_text() == text:
        return 0
    print(f"harness: {shown} is out of date; regenerate it: {command}", file=sys.stderr)
    return 1
