"""docs/layout.md is generated from the modules' docstrings (harness/cli/layout.py): a module added, moved or
removed without it fails here, and a module without a docstring is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.layout import COMMAND, PAGE, main, render

pytestmark = pytest.mark.unit

ROOT = PAGE.parents[1]


def test_the_committed_page_is_the_generated_one() -> None:
    assert PAGE.read_text() == render(), f"{PAGE.name} differs from the code; regenerate it: {COMMAND}"
    assert main(["--check"]) == 0


def test_every_module_of_the_code_has_its_row() -> None:
    page = PAGE.read_text()
    for package in ("harness", "scenarios", "fault_injectors"):
        for module in (ROOT / package).rglob("*.py"):
            rel = module.relative_to(ROOT)
            if module.name == "__init__.py" or "library" in rel.parts or "sitepath" in rel.parts:
                continue
            section = f"## `{rel.parent.as_posix()}/`"
            assert section in page, section
            body = page[page.index(section) :].split("\n## ", 1)[0]
            assert f"| `{module.name}` |" in body, rel


def _tree(tmp_path: Path, modules: dict[str, str]) -> Path:
    for name, text in modules.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_a_new_module_shows_with_its_first_sentence(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "harness/__init__.py": '"""The front door. More."""\n',
            "harness/engine/__init__.py": '"""The run machinery."""\n',
            "harness/engine/modes.py": '"""Run modes: how a run plays its ops. Details. ``x``."""\n',
        },
    )
    page = render(root)
    assert "## `harness/engine/`\n\nThe run machinery.\n" in page
    assert "| `modes.py` | Run modes: how a run plays its ops. |" in page


def test_a_module_without_a_docstring_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _tree(tmp_path, {"harness/__init__.py": '"""The front door."""\n', "harness/bare.py": "X = 1\n"})
    with pytest.raises(ValueError, match=r"bare\.py has no module docstring"):
        render(root)
    monkeypatch.setattr("harness.cli.layout.render", lambda: render(root))
    assert main(["--check"]) == 2
    assert "bare.py has no module docstring: write one" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("doc", "first"),
    [
        (
            "Nemeses on the input (e.g. Kafka records aged out). More.",
            "Nemeses on the input (e.g. Kafka records aged out).",
        ),
        ("The cost as rows grow (10^3 .. 10^6). Then.", "The cost as rows grow (10^3 .. 10^6)."),
        ("``merge RESULT.json ... [--json OUT]``: shards. More.", "`merge RESULT.json ... [--json OUT]`: shards."),
        ("What it states. ``command`` measures it.", "What it states."),
        ("One line without a period", "One line without a period"),
    ],
)
def test_the_first_sentence_ends_where_a_reader_would_end_it(tmp_path: Path, doc: str, first: str) -> None:
    from harness.cli.layout import first_sentence

    module = tmp_path / "m.py"
    module.write_text(f'"""{doc}"""\n')
    assert first_sentence(module) == first
