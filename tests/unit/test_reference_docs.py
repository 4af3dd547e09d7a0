"""docs/reference.md is generated from the code (harness/cli/reference.py): it cannot drift."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness.cli import reference
from harness.cli.reference import COMMAND, PAGE, ReferenceError, class_table, clauses, render


def test_the_committed_page_is_the_generated_one() -> None:
    stale = f"{PAGE.name} differs from the code; regenerate it: {COMMAND}"
    assert PAGE.read_text() == render(), stale


def test_the_page_documents_every_field_and_the_callables_users_write() -> None:
    page = render()
    for needle in (
        "| `source_overrides` | `Mapping[str, Any]` | `{}` |",
        "| `identity` | `tuple[str, ...]` | `(\"partition\", \"offset\", \"seq\")` |",
        "| `raw` | `bool` | `False` |",
        "`read_output(spark, ctx, schema) -> DataFrame`",
        "`schema` is the oracle's expected schema",
        "`setup(sc, ctx) -> StreamingContext`",
        "`resource(run_dir) -> AbstractContextManager[dict[str, str]]`",
        "| `batch_seconds` | `int` | required |",
    ):
        assert needle in page, needle
    assert "limits_batches" not in page  # not set by users (init=False)


@dataclass(frozen=True)
class _Documented:
    """A class for the test: ``plain`` is named here; ``b`` too (the second clause)."""

    #: The first field,
    #: over two lines.
    a: int
    plain: str = "x"
    b: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class _Undocumented:
    """Nothing about its field."""

    silent: int = 0


def test_fields_take_their_comment_else_the_docstring_clause_naming_them() -> None:
    table = class_table(_Documented)
    assert table[2] == "| `a` | `int` | required | The first field, over two lines. |"
    assert table[3].endswith("| `\"x\"` | A class for the test: `plain` is named here. |")
    assert table[4] == "| `b` | `tuple[str, ...]` | `()` | `b` too (the second clause). |"
    assert clauses("One (a; b). Two; three") == ["One (a; b)", "Two", "three"]


def test_a_field_without_documentation_is_refused_by_name() -> None:
    refused = r"_Undocumented\.silent has no documentation: write a #: comment"
    with pytest.raises(ReferenceError, match=refused):
        class_table(_Undocumented)


def test_check_says_which_command_regenerates_a_stale_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "docs" / "reference.md"
    page.parent.mkdir()
    monkeypatch.setattr(reference, "ROOT", tmp_path)
    monkeypatch.setattr(reference, "PAGE", page)
    assert reference.main(["--check"]) == 1  # missing
    assert COMMAND in capsys.readouterr().err
    assert reference.main(["--write"]) == 0 and reference.main(["--check"]) == 0
    page.write_text(page.read_text().replace("required", "optional", 1))
    assert reference.main(["--check"]) == 1
