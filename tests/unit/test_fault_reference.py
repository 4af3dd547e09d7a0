"""docs/fault-reference.md is generated from the registries (harness/cli/faultref.py): it cannot drift,
and it is the only table of crash points and fault actions in the docs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fault_injectors.actions import BUILTIN
from fault_injectors.plan import ALL_CRASH_POINTS
from harness.cli.faultref import COMMAND, PAGE, main, render

pytestmark = pytest.mark.unit

DOCS = PAGE.parent


def test_the_committed_page_is_the_generated_one() -> None:
    assert PAGE.read_text() == render(), f"{PAGE.name} differs from the code; regenerate it: {COMMAND}"
    assert main(["--check"]) == 0


def test_the_page_has_every_point_and_action_once() -> None:
    page = render()
    for name in [*ALL_CRASH_POINTS, "sink.step", "batch.time", "state.snapshot", *(a.name for a in BUILTIN)]:
        assert len(re.findall(rf"^\| `{re.escape(name)}` \|", page, re.M)) == 1, name


#: A table keyed by crash point or action that says where each fires, how precisely or what it does: a hand-kept
#: copy of the reference (tables of what was measured at each point are not).
HAND_TABLE = re.compile(
    r"^\| (?:crash )?(?:point|action|fault action) \|.*(?:where it fires|precision|what it does)", re.M | re.I
)


def test_no_other_page_keeps_a_table_of_them() -> None:
    pages = [p for p in sorted(DOCS.glob("*.md")) if p != PAGE]
    copies = [f"{p.name}: {m.group(0)}" for p in pages for m in HAND_TABLE.finditer(p.read_text())]
    assert not copies, "link docs/fault-reference.md instead:\n" + "\n".join(copies)


def test_the_copy_check_finds_the_old_table_and_passes_a_measured_one() -> None:
    old = "| point | where it fires | precision |\n|---|---|---|\n| `sink.write.mid` | a task | exact |\n"
    measured = "| crash point | transactional | publish in write |\n|---|---|---|\n| `source.read` | exact | exact |\n"
    assert HAND_TABLE.search(old) and not HAND_TABLE.search(measured)


def test_check_fails_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import faultref

    stale = tmp_path / "fault-reference.md"
    stale.write_text(render().replace("SIGKILL", "SIGTERM", 1))
    monkeypatch.setattr(faultref, "PAGE", stale)
    assert faultref.main(["--check"]) == 1
    assert faultref.main(["--write"]) == 0 and stale.read_text() == render()
