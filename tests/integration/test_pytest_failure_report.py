"""A failing ``chaos_run`` test, as a CI system sees it: the pytest failure section shows the rows the sink got
wrong beside the oracle's (chispa), and ``--junitxml`` carries the seed and the replay command.

The failure is real and cheap: a run of the at-least-once ``foreachBatch`` sink with one injected exception
after its write (a soft fault, no second JVM) duplicates batch 0; its bundle is then replayed by a user's test
file through ``--harness-replay``, in a pytest subprocess."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fault_injectors.plan import FaultRule
from harness.chaos.bundle import write_bundle
from harness.engine.commandline import harness_command, harness_prefix, shell_line
from harness.engine.pool import DriverPool
from harness.engine.report import to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec
from harness.spark.procs import TOKEN_PREFIX_ENV
from harness.verdict.rowdiff import DIFF_FILE, HEADER
from tests.integration.clirun import TOKEN_PREFIX, assert_renders, leftover_processes

pytest_plugins = ["pytester"]

USER_TESTS = """
import pytest


@pytest.mark.chaos(scenario="foreachbatch_append_naive", profile="ci")
def test_my_sink_is_exactly_once(chaos_run):
    chaos_run().assert_exactly_once()
"""


def test_failing_chaos_run_shows_rows_and_junit_properties(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool: DriverPool
) -> None:
    spec = RunSpec(
        "foreachbatch_append_naive",
        3,
        kills=0,
        rows=((12, 9),),
        extra_faults=(FaultRule("x1", "sink.commit.after", 0, action="raise"),),
    )
    outcome = run_spec(spec, tmp_path / "run", echo=lambda m: None, pool=pool)
    report = to_json(outcome)
    assert report["verdict"] == "violated", report.get("anomaly_counts")
    dupes = sorted((a["partition"], a["offset"]) for a in report["anomalies"] if a["kind"] == "duplicate")
    assert dupes and {a["kind"] for a in report["anomalies"]} == {"duplicate"}
    bundle = write_bundle(outcome, tmp_path / "bundle", report)
    diff_file = (bundle / DIFF_FILE).read_text()
    assert diff_file.startswith(HEADER) and "\x1b[" not in diff_file

    pytester.makepyfile(test_user=USER_TESTS)
    monkeypatch.setenv(TOKEN_PREFIX_ENV, TOKEN_PREFIX)  # the run's drivers carry our prefix: leftovers are seen
    xml = pytester.path / "out.xml"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--harness-replay", str(bundle), f"--junitxml={xml}", timeout=600
    )
    assert result.ret == 1, result.stdout.str()[-3000:]
    out = result.stdout.str()
    section = out[out.index("harness chaos") :]
    assert HEADER in section, section
    for partition, offset in dupes[:20]:  # each duplicated row, by its provenance, on the sink's side
        assert f"Row(partition={partition}, offset={offset}, seq=" in section
    saved = pytester.path / ".harness" / "bundles"  # the plugin keeps a failure's bundle beside the tests
    # The pytest run started in pytester's directory: its lines name this interpreter by its absolute path.
    harness = shell_line(harness_prefix(cwd=pytester.path))
    assert f"replay: {harness} replay {saved}/" in section
    # The failing run's directory is kept beside the tests too, and the section says where.
    runs = pytester.path / ".harness" / "runs"
    kept = [line for line in section.splitlines() if line.startswith("kept: run directory ")]
    assert len(kept) == 1 and kept[0].split()[3].startswith(f"{runs}/"), section[-1500:]
    run_dir = Path(kept[0].split()[3])
    assert (run_dir / "checkpoint" / "commits").is_dir() and (run_dir / "output").is_dir()

    props = {p.get("name"): p.get("value") for p in ET.parse(xml).getroot().iter("property")}
    assert props["seed"] == "3" and props["profile"] == "ci" and props["verdict"] == "violated", props
    assert props["scenario"] == "foreachbatch_append_naive"
    assert Path(props["bundle"]).parent == saved and (Path(props["bundle"]) / DIFF_FILE).exists()
    assert props["replay"] == harness_command("replay", props["bundle"], cwd=pytester.path)
    assert leftover_processes() == []
    # The failure section names the timeline page of the kept bundle; it draws the duplicated batch.
    page = Path(props["bundle"]) / "timeline.html"
    assert f"timeline: {page}" in section, section[-1500:]
    assert_renders(page, tmp_path, "duplicate", "batch 0", "replay: ")
