"""What every generated docs page shares: the command line (``--write`` rewrites the page from the code,
``--check`` exits 1 when the page on disk is not the code's, as each page's unit test runs it, 2 when the page
cannot be made), the replacement of a block between two marker lines, and a table cell.
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


def _span(text: str, markers: tuple[str, str]) -> tuple[int, int]:
    """Where the text between ``markers`` starts and ends; ValueError unless each marker is there exactly once,
    the end after the start (a marker quoted elsewhere would have prose overwritten)."""
    start, end = markers
    if text.count(start) != 1 or text.count(end) != 1:
        raise ValueError(f"the markers {start!r} and {end!r} must each be there once")
    begin = text.find(start) + len(start)
    stop = text.find(end, begin)
    if stop < 0:
        raise ValueError(f"{end!r} comes before {start!r}")
    return begin, stop


def between(text: str, markers: tuple[str, str]) -> str:
    """What lies between ``markers`` in ``text`` (ValueError as :func:`replace_between`)."""
    begin, stop = _span(text, markers)
    return text[begin:stop]


def replace_between(text: str, markers: tuple[str, str], body: str) -> str:
    """``text`` with what lies between ``markers`` replaced by ``body`` on lines of its own, the markers and the
    rest kept: every generated block of a hand-written page goes through this. ValueError unless each marker is
    there exactly once, the end after the start."""
    begin, stop = _span(text, markers)
    return f"{text[:begin]}\n{body}\n{text[stop:]}"


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
