"""The README is a short front page; every docs page is reachable from its Documentation section; links
resolve; and every Spark-free command the README and ``docs/`` mark runnable runs as shown (``tests/doc_commands.py``;
the commands that start Spark are in ``tests/integration/test_docs_commands.py``)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from tests.admission import needs_admission_control
from tests.doc_commands import PAGES, ROOT, Command, broken_links, commands

README = ROOT / "README.md"
SPARK_FREE = [c for c in commands() if not c.spark]


def test_readme_is_a_front_page_of_at_most_150_lines() -> None:
    assert len(README.read_text().splitlines()) <= 150


def test_every_docs_page_is_in_the_readmes_documentation_section_and_the_index() -> None:
    readme = README.read_text()
    section = readme[readme.index("## Documentation") :]
    linked = set(re.findall(r"\]\(docs/([^)#]+\.md)\)", section))
    index = set(re.findall(r"\]\(([^)#/]+\.md)\)", (ROOT / "docs" / "index.md").read_text()))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages - linked == set(), "docs pages missing from the README's Documentation section"
    assert pages - index == set(), "docs pages missing from docs/index.md"


def test_every_relative_link_resolves() -> None:
    assert broken_links() == []


def test_the_runnable_marker_is_used_and_parsed() -> None:
    found = commands()
    assert {c.page.name for c in found} >= {"README.md", "getting-started.md"}
    assert any(c.spark for c in found) and SPARK_FREE
    assert all(c.text.strip() and "path/to" not in c.text for c in found)
    assert len(PAGES) > 10


def test_the_readme_pytest_example_is_the_tested_file() -> None:
    readme = README.read_text()
    start = readme.index("## Use it in your project")
    block = readme[start:].split("```python\n", 1)[1].split("```", 1)[0]
    tested = (ROOT / "tests/integration/test_user_pipeline.py").read_text().splitlines()
    code = [re.sub(r"\s+#.*$", "", line) for line in block.splitlines()]
    missing = [line for line in code if line.strip() and not line.startswith("def ") and line not in tested]
    assert missing == ["    chaos_run().assert_exactly_once()"]  # the file keeps the result to check it further
    assert "    result.assert_exactly_once()" in tested


def _needs(command: Command) -> tuple[pytest.MarkDecorator, ...]:
    """The README's example sources are written against PySpark 4.2's admission control."""
    source = "check-source" in command.text or "--source" in command.text
    return (needs_admission_control,) if source and "examples/connectors" in command.text else ()


@pytest.mark.parametrize("command", [pytest.param(c, id=c.id, marks=_needs(c)) for c in SPARK_FREE])
def test_spark_free_runnable_command(command: Command, tmp_path: Path) -> None:
    # TMPDIR: a command whose check fails keeps its evidence in a temporary directory (check-source does).
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "NO_COLOR": "1", "TMPDIR": str(tmp_path)}
    proc = command.run(timeout=120, env=env)
    shown = f"{command.id}: {command.text}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}"
    assert proc.returncode == command.exit_code, shown
    if command.first_output_line is not None:
        assert proc.stdout.splitlines()[0] == command.first_output_line, shown
