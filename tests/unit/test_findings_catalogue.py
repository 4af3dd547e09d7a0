"""docs/findings.md and its data file docs/findings.toml agree: every entry has a section on the page, with its
reports linked and its releases named, and every entry's data is complete (the heavy tier runs them)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
DOCS = Path(__file__).resolve().parents[2] / "docs"
VERDICTS = {"exactly-once", "violated", "recovery-failed", "pipeline-failed", "upgrade-refused"}
#: What the release without the bug does: it holds, or (where the fix is a refusal) it refuses loudly,
#: naming what its ``says`` gives, and the campaign finds no violation.
HELD = {"exactly-once", "refused"}


def entries() -> list[dict[str, object]]:
    return list(tomllib.loads((DOCS / "findings.toml").read_text())["finding"])


def test_every_entry_has_its_section_its_reports_and_both_releases_on_the_page() -> None:
    page = (DOCS / "findings.md").read_text()
    assert entries()
    for entry in entries():
        section = page[page.index(f"\n## {entry['id']}\n") :]
        section = section[: section.find("\n## ", 1) if "\n## " in section[1:] else len(section)]
        reports = entry["reports"]
        assert isinstance(reports, list) and reports
        assert all(url in section for url in reports), entry["id"]
        for side in ("affected", "held"):
            release = entry[side]
            assert isinstance(release, dict)
            assert f"PySpark {release['pyspark']}" in section, (entry["id"], side)
            assert release["verdict"] in (HELD if side == "held" else VERDICTS)
        assert f"harness chaos {entry['scenario']} {' '.join(entry['campaign'])}" in section  # type: ignore[arg-type]


def test_an_entry_is_found_on_one_side_and_holds_on_the_other() -> None:
    for entry in entries():
        affected, held = entry["affected"], entry["held"]
        assert isinstance(affected, dict) and isinstance(held, dict)
        assert affected["verdict"] != "exactly-once" and held["verdict"] in HELD, entry["id"]
        assert held["verdict"] == "exactly-once" or held.get("says"), entry["id"]
        # The other side is another release, or (a hazard by design) the workaround's pipeline on the same one.
        assert affected["pyspark"] != held["pyspark"] or held.get("scenario"), entry["id"]
        assert held.get("scenario") != entry["scenario"] and affected.get("says"), entry["id"]
