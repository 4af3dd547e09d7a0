"""The commands the README and ``docs/*.md`` mark runnable, and the pages' links (docs/index.md says how).

A fence ```` ```bash runnable ```` holds commands that need no Spark (run by ``tests/unit/test_docs.py``);
```` ```bash runnable spark ```` holds commands that start Spark (``tests/integration/test_docs_commands.py``,
heavy tier). Each command is a line, or lines joined by a trailing ``\\``; a trailing ``# exit N`` is its
expected exit status. A plain ```` ``` ```` block right after the command's block is its output: its first
line must be the first line the command prints. Commands run in bash from the repository root, with
``.venv/bin/python`` and a leading ``python`` replaced by the interpreter running the tests.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
FENCE = re.compile(r"^(\s*)```(.*)$")
EXIT = re.compile(r"#\s*exit (\d+)\b")


@dataclass(frozen=True)
class Command:
    page: Path
    line: int  # 1-based line of the command's first line
    text: str  # the command as written (continuations joined)
    spark: bool
    exit_code: int
    first_output_line: str | None

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def shell(self) -> str:
        python = shlex.quote(sys.executable)
        text = self.text.replace(".venv/bin/python", python)
        return re.sub(r"^python(?=\s)", python, text)

    def run(self, timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", self.shell()], cwd=ROOT, env=env if env is not None else dict(os.environ),
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip


def blocks(text: str) -> list[tuple[int, str, list[str]]]:
    """Every fenced block of a page: (line of its first body line, info string, body lines)."""
    out: list[tuple[int, str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        info, body, start = m.group(2).strip(), [], i + 2
        i += 1
        while i < len(lines) and not lines[i].strip().startswith("```"):
            body.append(lines[i])
            i += 1
        out.append((start, info, body))
        i += 1
    return out


def commands(pages: tuple[Path, ...] = PAGES) -> list[Command]:
    found: list[Command] = []
    for page in pages:
        text = page.read_text()
        all_blocks = blocks(text)
        lines = text.splitlines()
        for n, (start, info, body) in enumerate(all_blocks):
            words = info.split()
            if words[:2] != ["bash", "runnable"]:
                continue
            output = None
            if n + 1 < len(all_blocks) and all_blocks[n + 1][1] == "" and all_blocks[n + 1][2]:
                between = lines[start - 1 + len(body) + 1 : all_blocks[n + 1][0] - 2]
                if not any(x.strip() for x in between):
                    output = all_blocks[n + 1][2][0]
            pending: list[str] = []
            first = 0
            for k, raw in enumerate(body):
                if not pending and (not raw.strip() or raw.lstrip().startswith("#")):
                    continue
                if not pending:
                    first = start + k
                pending.append(raw.rstrip())
                if raw.rstrip().endswith("\\"):
                    continue
                joined = "\n".join(pending)
                m = EXIT.search(joined)
                found.append(Command(page, first, joined, "spark" in words[2:], int(m.group(1)) if m else 0, output))
                pending = []
    return found


def slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    in_code = False
    for line in page.read_text().splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if in_code or not m:
            continue
        base = slug(m.group(1))
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.add(base if k == 0 else f"{base}-{k}")
    return out


LINK = re.compile(r"\]\(([^)\s]+)\)")


def links(page: Path) -> list[tuple[int, str]]:
    """The relative links of a page outside code: (line, target)."""
    out: list[tuple[int, str]] = []
    in_code = False
    for n, line in enumerate(page.read_text().splitlines(), 1):
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target):
                out.append((n, target))
    return out


def broken_links(pages: tuple[Path, ...] = PAGES) -> list[str]:
    broken: list[str] = []
    for page in pages:
        for n, target in links(page):
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(ROOT)}:{n}: {target}"
            if not dest.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{where} (no heading #{anchor})")
    return broken
