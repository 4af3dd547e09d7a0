"""``docs/conformance.md``'s two check tables, generated from :mod:`harness.conformance.checkdocs`: each check's
id, the contract clause it stands for, what it checks and what its failure means, in the order the kit runs them.

The rest of the page is prose kept by hand; only the text between each table's two markers is written.
``python -m harness.cli.checkref --write`` rewrites them; ``--check`` exits 1 when the page on disk differs
(``tests/unit/test_check_reference.py`` fails then too).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from harness.cli.generated import page_main, replace_between, table_cell
from harness.conformance.checkdocs import SINK_CHECKS, SOURCE_CHECKS, CheckDoc

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "conformance.md"
COMMAND = "python -m harness.cli.checkref --write"
#: Each table's markers: ``(start, end)``.
SOURCE_MARKERS = (f"<!-- source checks: written by {COMMAND} -->", "<!-- end of source checks -->")
SINK_MARKERS = (f"<!-- sink checks: written by {COMMAND} -->", "<!-- end of sink checks -->")


def source_table(checks: Sequence[CheckDoc] = SOURCE_CHECKS) -> str:
    lines = [
        "| id | contract clause (`datasource.py`) | what it checks | what a failure means |",
        "|---|---|---|---|",
    ]
    for c in checks:
        lines.append(f"| `{c.id}` | {table_cell(c.clause)} | {table_cell(c.checks)} | {table_cell(c.failure)} |")
    return "\n".join(lines)


def sink_table(checks: Sequence[CheckDoc] = SINK_CHECKS) -> str:
    lines = ["| id | what it checks | what a failure means |", "|---|---|---|"]
    lines += [f"| `{c.id}` | {table_cell(c.checks)} | {table_cell(c.failure)} |" for c in checks]
    return "\n".join(lines)


def render(page: Path | None = None) -> str:
    """The page with both tables written from the code (ValueError naming an unreadable page)."""
    try:
        text = (page or PAGE).read_text()
    except OSError as exc:
        raise ValueError(f"cannot read it: {exc}") from None
    return replace_between(replace_between(text, SOURCE_MARKERS, source_table()), SINK_MARKERS, sink_table())


def main(argv: Sequence[str] | None = None) -> int:
    return page_main(
        argv,
        prog="python -m harness.cli.checkref",
        description=__doc__,
        page=PAGE,
        render=lambda: render(PAGE),
        command=COMMAND,
    )


if __name__ == "__main__":
    sys.exit(main())
