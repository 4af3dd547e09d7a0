"""``certify`` on a reduced subset (memory and console sinks: one real SIGKILL and
two, a refused restart and replayed output), its JSON and HTML, and the HTML
rendered in headless Chromium (skipped with the reason when Chromium is absent)."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tests.ci_skips import missing
from tests.integration.clirun import CHROMIUM, chromium, harness, leftover_processes


@pytest.fixture(scope="module")
def certified(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("certify")
    rc, stdout, stderr = harness(
        "certify",
        "--only",
        "sink:memory,sink:console",
        "--json",
        str(out / "c.json"),
        "--html",
        str(out / "c.html"),
        timeout=1200,
    )
    doc = json.loads((out / "c.json").read_text()) if (out / "c.json").exists() else {}
    return {
        "rc": rc,
        "out": stdout,
        "err": stderr[-4000:],
        "doc": doc,
        "html": out / "c.html",
        "dir": out,
        "leftovers": leftover_processes(),
    }


def test_every_row_measured_and_flagged_where_it_differs(certified: dict[str, Any]) -> None:
    assert certified["rc"] == 0, certified["out"] + certified["err"]
    rows = {r["key"]: r for r in certified["doc"]["rows"]}
    assert set(rows) == {"sink:memory", "sink:console"}
    memory, console = rows["sink:memory"], rows["sink:console"]
    assert (memory["documented"], memory["measured"], memory["status"]) == ("none", "none", "agrees")
    assert "does not support recovering from checkpoint" in memory["evidence"]
    assert (console["documented"], console["measured"], console["status"]) == ("none", "at-least-once", "stronger")
    assert console["kills"] == 2 and "duplicate" in console["evidence"]
    assert "Programming Guide" in console["where"]
    lines = certified["out"].splitlines()
    assert lines[0].startswith("certify: 2 row(s)") and "1 flagged" in lines[0]
    assert any("console sink" in line and "FLAG stronger" in line for line in lines)
    assert certified["leftovers"] == []


def test_timelines_hold_batches_kills_and_restarts(certified: dict[str, Any]) -> None:
    tl = certified["doc"]["timelines"]["sink:console"]
    assert len(tl["batches"]) >= 2 and all(b["committed_ns"] for b in tl["batches"])
    assert [k["point"] for k in tl["kills"]] == ["after_offsets_logged", "sink.commit.after"]
    assert sum(d["ended"] == "killed" for d in tl["drivers"]) == 2
    assert tl["batches"][1]["anomalies"].get("duplicate", 0) > 0
    memory = certified["doc"]["timelines"]["sink:memory"]
    assert memory["failures"] and "recovering from checkpoint" in memory["failures"][0]["message"]


@pytest.mark.skipif(
    not CHROMIUM.exists(), reason=missing("headless Chromium not installed (apt-get install -y chromium)")
)
def test_html_report_renders_in_headlesschromium(certified: dict[str, Any]) -> None:
    html, work = certified["html"], certified["dir"]
    assert html.exists(), certified["err"]
    dom = chromium(html, work, "--dump-dom").stdout
    assert 'data-layout-check="ok"' in dom, "labels leave the picture or overlap: " + dom[:300]
    assert dom.count('<svg class="timeline"') == 2
    for text in ("console sink", "memory sink", "stronger than documented", "sink.commit.after", "driver-", "batch 1"):
        assert text in dom
    shot = work / "report.png"
    chromium(html, work, f"--screenshot={shot}")
    assert shot.exists() and shot.stat().st_size > 20_000
    shutil.rmtree(work / "profile-dump-dom", ignore_errors=True)
