"""The scenario catalogue in ``docs/scenarios.md``, generated from the library's ``Scenario`` objects.

Each built-in scenario's row is written from its own fields (``summary``, ``guarantee``, its source's
``describe()``, ``kill_points``), between two marker lines of the page; the rest of the page (what was
measured, how each oracle works) stays prose. ``python -m harness.cli.catalogue --write`` rewrites the block;
``--check`` exits 1 when it differs from the code (``tests/unit/test_scenario_catalogue.py`` fails then too).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from fault_injectors.plan import CRASH_POINTS
from harness.cli.generated import page_main, replace_between, table_cell
from scenarios import Scenario, all_scenarios

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "scenarios.md"
COMMAND = "python -m harness.cli.catalogue --write"
BEGIN = f"<!-- the catalogue: generated from the scenarios by `{COMMAND}`; do not edit by hand -->"
END = "<!-- end of the generated catalogue -->"


def _points(scenario: Scenario) -> str:
    points = scenario.kill_points
    if set(points) == set(CRASH_POINTS):
        return f"all {len(CRASH_POINTS)}"
    return ", ".join(f"`{p}`" for p in points)


def table(scenarios: Mapping[str, Scenario]) -> str:
    """The catalogue's rows, one a scenario, by name."""
    lines = [
        "| scenario | pipeline | expected verdict | source | seeded kills at |",
        "|---|---|---|---|---|",
    ]
    for name, sc in sorted(scenarios.items()):
        row = [f"`{name}`", sc.summary, sc.guarantee, sc.source.describe(), _points(sc)]
        lines.append("| " + " | ".join(table_cell(c) for c in row) + " |")
    return "\n".join(lines)


def render(page: str, scenarios: Mapping[str, Scenario]) -> str:
    """``page`` with the block between :data:`BEGIN` and :data:`END` replaced by :func:`table`
    (``ValueError`` when a marker is missing, there twice or out of order)."""
    return replace_between(page, (BEGIN, END), table(scenarios))


def main(argv: Sequence[str] | None = None) -> int:
    def render_page() -> str:
        if not PAGE.exists():
            raise ValueError("the page is missing")
        return render(PAGE.read_text(), all_scenarios())

    return page_main(
        argv,
        prog="python -m harness.cli.catalogue",
        description=__doc__,
        page=PAGE,
        render=render_page,
        command=COMMAND,
    )


if __name__ == "__main__":
    sys.exit(main())
