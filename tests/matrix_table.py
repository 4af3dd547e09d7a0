"""The support matrix as tables: the full one ``bin/test-matrix`` prints, and the README's, which it writes.

Pure text: a measured cell is ``(name, text, ok, seconds)`` where ``text`` is ``"exit N: <verdict line>"``. The
README keeps the short form between :data:`START` and :data:`END`; nothing else of the README is touched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from harness.cli.generated import between, replace_between

#: One measured cell: its row name, ``"exit N: <verdict line>"``, whether N was the expected code, seconds.
Measured = tuple[str, str, bool, float]

START = "<!-- support matrix: written by bin/test-matrix -->"
END = "<!-- end of support matrix -->"

_EXIT = re.compile(r"^exit (-?\d+): ?(.*)$", re.S)
#: An absolute path's directories, dropped from a refusal: the release's reason is what the cell must show.
_DIRS = re.compile(r"(?<![\w.:/])/(?:[^\s/:'\"]+/)+")
#: A scenario refusal's subject (``scenario NAME cannot run here: ``): the row already names it.
_SUBJECT = re.compile(r"^scenario \S+ cannot run here: ")
#: A full table's cell: whether it was expected, its ``exit N: ...`` text and its seconds.
_FULL_CELL = re.compile(r"^(UNEXPECTED: )?(.*?)(?: \((\d+) s\))?$", re.S)
#: A verdict line's ``(scenario=..., seed=N)`` or a check report's ``; module:Class``: the row says which subject.
_SCENARIO = re.compile(r" \(scenario=[^)]*\)|; [\w.]+:\w+(?=\))")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def short(text: str, ok: bool, seconds: float) -> str:
    """A cell of the README's table: held, caught (what), failed (why), refused (why), or UNEXPECTED."""
    found = _EXIT.match(text)
    code, said = (int(found.group(1)), found.group(2).strip()) if found else (-1, text)
    said = _SCENARIO.sub("", said.replace("|", "/").removeprefix("harness: "))
    took = f", {seconds:.0f} s" if seconds else ""
    if code == 0:
        word = "held" if said.startswith("exactly-once held") or not said else _cut(said, 110)
        out = f"{word}{took}"
    elif code == 1:
        verdict, _, detail = said.partition(": ")
        verdict = "caught" if verdict == "exactly-once violated" else verdict
        out = f"{verdict}: {_cut(detail, 100)}{took}" if detail else f"{_cut(verdict, 100)}{took}"
    elif code == 2:
        out = f"refused: {_cut(_DIRS.sub('', _SUBJECT.sub('', said)), 200)}"
    else:
        out = f"exit {code}: {_cut(said, 100)}"
    return out if ok else f"UNEXPECTED ({out})"


def _row(name: str, cells: Sequence[str]) -> str:
    return f"| {name} | " + " | ".join(cells) + " |"


def full(releases: Sequence[str], results: Mapping[str, Sequence[Measured]]) -> str:
    """Every cell's exit code, verdict line and time: what ``bin/test-matrix`` prints and keeps in ``.harness``."""
    names = [name for name, *_ in results[releases[0]]]
    lines = [_row("cell", [f"PySpark {r}" for r in releases]), "|---|" + "---|" * len(releases)]
    for i, name in enumerate(names):
        cells = []
        for r in releases:
            _, text, ok, secs = results[r][i]
            took = f" ({secs:.0f} s)" if secs else ""
            cells.append(f"{'' if ok else 'UNEXPECTED: '}{text.replace('|', '/')}{took}")
        lines.append(_row(name, cells))
    return "\n".join(lines)


def parse_full(text: str) -> tuple[str, list[str], dict[str, list[Measured]]]:
    """The stamp line, releases and cells of a table :func:`full` wrote (``.harness/matrix.md``), read back so that
    the README's block can be written again without measuring again."""
    stamp = next((line for line in text.splitlines() if line.strip() and not line.startswith("|")), "")
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    if not rows:
        raise ValueError("no support matrix table in it: run bin/test-matrix")
    releases = [c.strip().removeprefix("PySpark ") for c in rows[0].strip().strip("|").split("|")[1:]]
    results: dict[str, list[Measured]] = {r: [] for r in releases}
    for row in rows[1:]:
        name, *cells = [c.strip() for c in row.strip().strip("|").split("|")]
        for release, cell in zip(releases, cells, strict=True):
            found = _FULL_CELL.match(cell)
            assert found is not None  # the pattern matches any text
            secs = float(found.group(3)) if found.group(3) else 0.0
            results[release].append((name, found.group(2), found.group(1) is None, secs))
    return stamp, releases, results


def readme_block(
    releases: Sequence[str],
    results: Mapping[str, Sequence[Measured]],
    stamp: str,
    notes: Mapping[tuple[str, str], str] | None = None,
) -> str:
    """The README's matrix, between its markers: the line saying how it was measured, one short cell per
    release; ``notes[(release, row)]`` is added to its cell (a reported bug it hits)."""
    names = [name for name, *_ in results[releases[0]]]
    lines = [stamp, "", _row("cell", [f"PySpark {r}" for r in releases]), "|---|" + "---|" * len(releases)]
    for i, name in enumerate(names):
        said = notes or {}
        cells = []
        for r in releases:
            cell = short(results[r][i][1], results[r][i][2], results[r][i][3])
            cells.append(f"{cell}; {said[(r, name)]}" if (r, name) in said else cell)
        lines.append(_row(name, cells))
    return "\n".join([*lines, ""])


def replace_block(readme: str, block: str) -> str:
    """``readme`` with its matrix block replaced by ``block``; a ValueError naming the markers unless each is
    there once."""
    try:
        return replace_between(readme, (START, END), block)
    except ValueError as exc:
        raise ValueError(f"README.md's support matrix block: {exc}; put them where the matrix goes") from None


def parse_block(readme: str) -> tuple[list[str], list[str]]:
    """The releases (columns) and cell names (rows) of the README's matrix block."""
    try:
        block = between(readme, (START, END))
    except ValueError as exc:
        raise ValueError(f"README.md's support matrix block: {exc}") from None
    rows = [line for line in block.splitlines() if line.startswith("| ")]
    if not rows:
        return [], []
    head = [c.strip() for c in rows[0].strip("|").split("|")]
    return [c.removeprefix("PySpark ") for c in head[1:]], [r.strip("|").split("|")[0].strip() for r in rows[1:]]
