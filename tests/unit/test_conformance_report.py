"""Reports without Spark: check results and exit codes, the certify status rules
and table, the timeline built from a run directory, its HTML/SVG, the console
sink parser, and the CLI's one-line input errors (exit 2)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.conformance.certify.command import ROWS, exit_code, render_table, status_of
from harness.conformance.certify.documented import DOCUMENTED
from harness.conformance.certify.html import render_html, timeline_svg
from harness.conformance.certify.scenarios import parse_console
from harness.conformance.results import CheckFailed, CheckOutcome, CheckSkipped, ConformanceReport, run_check
from harness.engine.history import History
from harness.inspector.synth import synth_checkpoint
from harness.timeline.story import Timeline, anomaly_counts, build_timeline
from tests.admission import needs_admission_control

ROOT = Path(__file__).resolve().parents[2]


def test_run_check_maps_outcomes() -> None:
    def fails() -> str:
        raise CheckFailed("bad", ["evidence"], "do this", ["lost"])

    def skips() -> str:
        raise CheckSkipped("n/a")

    def raises() -> str:
        raise ConnectionError("down")

    assert run_check("a", lambda: "fine").status == "pass"
    failed = run_check("b", fails)
    assert (failed.status, failed.details, failed.fix, failed.observed) == ("fail", ("evidence",), "do this", ("lost",))
    assert run_check("c", skips).summary == "n/a"
    crashed = run_check("d", raises)
    assert crashed.status == "fail" and "ConnectionError: down" in crashed.summary


def test_report_exit_codes_and_rendering() -> None:
    report = ConformanceReport("m:C", "sink", [CheckOutcome("x", "pass", "ok"), CheckOutcome("y", "skip", "n/a")])
    assert report.exit_code == 0 and report.summary_line().startswith("sink conforms")
    report.checks.append(CheckOutcome("z", "error", "could not run", ("why",)))
    assert report.exit_code == 2
    report.checks.append(CheckOutcome("w", "fail", "broken", tuple(f"d{i}" for i in range(12)), "fix it"))
    assert report.exit_code == 1
    text = report.render_text()
    assert text.splitlines()[0].startswith("sink NOT conforming: w failed")
    assert "... and 4 more" in text and "fix: fix it" in text
    doc = json.loads(report.dumps())
    assert doc["exit_code"] == 1 and [c["id"] for c in doc["checks"]] == ["x", "y", "z", "w"]
    # What an xdist worker reads back from the worker that ran the checks is the same report.
    report.checks.append(CheckOutcome("v", "fail", "rows", ("a",), "", ("duplicate",), 1.5, "+--+"))
    report.guarantee, report.steps = {"declared": "exactly-once", "measured": "at-least-once"}, {"census": 3}
    again = ConformanceReport.from_json(json.loads(report.dumps()))
    assert again == report and again.render_text() == report.render_text()


@pytest.mark.parametrize(
    ("documented", "measured", "status"),
    [
        ("exactly-once", "exactly-once", "agrees"),
        ("exactly-once", "at-least-once", "contradicts"),
        ("at-least-once", "exactly-once", "stronger"),
        ("at-least-once", "at-most-once", "contradicts"),
        ("none", "at-least-once", "stronger"),
        ("none", "none", "agrees"),
        ("replayable", "replayable", "agrees"),
        ("replayable", "not replayable", "contradicts"),
        ("exactly-once", None, "not measured"),
    ],
)
def test_certify_status(documented: str, measured: str | None, status: str) -> None:
    assert status_of(documented, measured) == status


def test_certify_rows_are_documented_and_cited() -> None:
    assert {r.key for r in ROWS} == set(DOCUMENTED)
    builtins = [r for r in ROWS if r.kind in ("source", "sink")]
    assert {r.key for r in builtins} >= {
        "source:rate",
        "source:rate-micro-batch",
        "source:file",
        "sink:file",
        "sink:foreach",
        "sink:foreachBatch-naive",
        "sink:foreachBatch-idempotent",
        "sink:memory",
        "sink:console",
        "source:kafka",
        "sink:kafka",
    }
    for r in builtins:
        cites = ("Delta", "delta-rs") if r.key.startswith("sink:delta") else ("Programming Guide",)
        assert any(c in DOCUMENTED[r.key].where for c in cites) and r.kill_points
    kafka = {r.key: r for r in ROWS if r.kafka}
    assert {"source:kafka", "sink:kafka"} <= set(kafka) and all(r.needs for r in kafka.values())
    triggers = [r for r in ROWS if r.kind == "trigger"]
    assert {r.key.split(":")[1] for r in triggers} == {
        "available-now",
        "once",
        "processing-time",
        "continuous",
        "real-time",
    }
    for r in triggers:  # each names the trigger its run uses (or its scenario's default one) and what it kills
        assert r.scenario and (r.kill_points or r.kills)
        assert r.trigger or ":" in r.scenario or r.scenario == "rate_continuous"
    assert kafka["source:kafka"].scenario == "kafka_file_sink" and kafka["source:kafka"].source is None
    assert "Kafka Integration Guide > Writing Data to Kafka" in DOCUMENTED["sink:kafka"].where


def _row(key: str, status: str, measured: str = "x", error: str | None = None) -> dict[str, object]:
    return {
        "key": key,
        "kind": "sink",
        "name": key,
        "documented": "d",
        "quote": "q",
        "where": "W > s",
        "measured": measured,
        "status": status,
        "evidence": "e",
        "error": error,
        "kills": 1,
        "duration_s": 3.0,
    }


def test_certify_table_flags_and_exit_codes() -> None:
    rows = [_row("a", "agrees"), _row("b", "stronger")]
    assert exit_code(rows) == 0
    text = render_table(rows, 12)
    assert "1 flagged" in text and "FLAG stronger" in text and "a: e" in text
    assert exit_code([*rows, _row("c", "contradicts")]) == 1
    assert exit_code([*rows, _row("d", "not measured", error="boom")]) == 2
    assert exit_code([*rows, _row("e", "not measured", error="skipped: no postgres")]) == 0


def _run_dir(tmp_path: Path) -> Path:
    """A run directory as a kill/restart run leaves it: batch 1 hit by a kill before its commit, replayed."""
    run = tmp_path / "run"
    synth_checkpoint(run / "checkpoint", batches=4, committed=4)
    t0 = time.time_ns()
    sec = 1_000_000_000
    times = {0: (1, 2), 1: (3, 9), 2: (10, 11), 3: (12, 13)}
    for b, (planned, committed) in times.items():
        os.utime(run / "checkpoint" / "offsets" / str(b), ns=(t0 + planned * sec,) * 2)
        os.utime(run / "checkpoint" / "commits" / str(b), ns=(t0 + committed * sec,) * 2)
    h = History(run / "history.jsonl")
    h.append("ok", "runner", "add_data", {"round": 1}, t0)
    h.append("ok", "runner", "start_driver", {"driver": "driver-1", "pid": 1, "startup_s": 0.5}, t0 + sec // 2)
    rule = {"point": "sink.commit.after", "action": "kill_process_group"}
    h.append("info", "driver-1", "kill", {"rule": rule, "batch": 1, "context": {"commit_logged": False}}, t0 + 4 * sec)
    h.append("info", "driver-1", "crash", {"returncode": -9}, t0 + 4 * sec + 1)
    h.append("ok", "runner", "add_data", {"round": "while down 1"}, t0 + 5 * sec)
    h.append("ok", "runner", "start_driver", {"driver": "driver-2", "pid": 2, "startup_s": 3.0}, t0 + 8 * sec)
    h.append("ok", "runner", "check", {}, t0 + 14 * sec)
    h.close()
    return run


def test_timeline_from_a_run_directory(tmp_path: Path) -> None:
    anomalies = anomaly_counts([{"kind": "duplicate", "batch_id": 1, "observed_count": 2, "expected_count": 1}] * 3)
    tl = build_timeline(_run_dir(tmp_path), "a run", "violated", anomalies)
    assert [d.name for d in tl.drivers] == ["driver-1", "driver-2"]
    assert (tl.drivers[0].ended, tl.drivers[1].ended) == ("killed", "exited")
    assert [b.batch_id for b in tl.batches] == [0, 1, 2, 3]
    assert [b.committed_by for b in tl.batches] == ["driver-1", "driver-2", "driver-2", "driver-2"]
    assert tl.batches[1].replayed and tl.batches[1].kills == ["sink.commit.after"]
    assert tl.batches[1].anomalies == {"duplicate": 3} and not tl.batches[0].replayed
    assert [d["label"] for d in tl.data] == ["+data 1", "+data while down 1"]
    assert Timeline.from_json(json.loads(json.dumps(tl.to_json()))) == tl


def test_html_report_is_self_contained_and_names_everything(tmp_path: Path) -> None:
    tl = build_timeline(_run_dir(tmp_path), "a run", "violated", [{"kind": "duplicate", "batch_id": 1, "count": 20}])
    svg = timeline_svg(tl, "t1")
    assert svg.count("<rect") >= 4 + 2 + 1  # batches, drivers, anomaly badge
    assert "sink.commit.after" in svg and "20 duplicate" in svg and "replayed by driver-2" in svg
    rows = [_row("sink:x", "stronger", "at-least-once")]
    page = render_html("T <&>", "meta", rows, {"sink:x": tl})
    assert "T &lt;&amp;&gt;" in page and 'id="run-sink:x"' in page and "data-layout-check" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page), "the report must not load anything from the network"
    assert "<svg" in page and "stronger than documented" in page


CONSOLE = """
-------------------------------------------
Batch: 0
-------------------------------------------
+---------+------+---+---+-----+
|partition|offset|seq|key|value|
+---------+------+---+---+-----+
|0        |0     |0  |6  |66855|
|1        |0     |0  |3  |12   |
+---------+------+---+---+-----+

-------------------------------------------
Batch: 1
-------------------------------------------
+---------+------+---+---+-----+
|partition|offset|seq|key|value|
+---------+------+---+---+-----+
|0        |1     |0  |2  |7    |
"""


def test_console_parser_ignores_a_table_cut_by_a_kill() -> None:
    tables = parse_console(CONSOLE + CONSOLE.replace("Batch: 1", "Batch: 9") + "+---------+------+---+---+-----+\n")
    assert sorted(tables) == [0, 9]
    assert len(tables[0]) == 2 and tables[0][0][0] == ["partition", "offset", "seq", "key", "value"]
    assert tables[0][0][1:] == [["0", "0", "0", "6", "66855"], ["1", "0", "0", "3", "12"]]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["check-source", "nowhere/x.py:Src"], "does not exist"),
        pytest.param(
            ["check-source", "examples/connectors/jsonl_source.py:Missing"],
            "has no attribute 'Missing'",
            marks=needs_admission_control,
        ),
        pytest.param(
            ["check-source", "examples/connectors/jsonl_source.py:JsonlSource", "--option", "oops"],
            "key=value",
            marks=needs_admission_control,
        ),
        pytest.param(
            ["check-source", "examples/connectors/jsonl_source.py:JsonlSource", "--skip", "nope"],
            "unknown check id",
            marks=needs_admission_control,
        ),
        (
            ["check-sink", "examples/connectors/attempt_keyed_sink.py:AttemptKeyedSink", "--read-back", "x.py:f"],
            "does not exist",
        ),
        (
            [
                "check-sink",
                "examples/connectors/attempt_keyed_sink.py:AttemptKeyedSink",
                "--read-back",
                "examples/connectors/attempt_keyed_sink.py:read_back",
                "--points",
                "sink.nowhere",
                "--skip",
                "write-invisible-until-commit,idempotent-commit,keys-on-batch-id,abort-cleans-up,task-retry",
            ],
            "not crash points",
        ),
        (["certify", "--only", "sink:nope"], "unknown row"),
    ],
)
def test_cli_input_errors_exit_2_with_one_line(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and err.startswith("harness: ") and len(err.splitlines()) == 1


def test_documented_kit_example_is_the_tested_file() -> None:
    readme = (ROOT / "docs" / "getting-started.md").read_text()
    start = readme.index("from harness.conformance import replayable_context")
    snippet = readme[start : readme.index("```", start)]
    tested = (ROOT / "tests/integration/test_conformance_readme.py").read_text()
    assert tested[tested.index("from harness.conformance import replayable_context") :] == snippet


@needs_admission_control
def test_cli_rejects_connectors_without_the_needed_methods(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["check-source", "examples/connectors/publish_in_write_sink.py:PublishInWriteSink"]) == 2
    assert "implements neither streamReader() nor simpleStreamReader()" in capsys.readouterr().err
    argv = ["check-sink", "examples/connectors/jsonl_source.py:JsonlSource", "--read-back", "x.py:f"]
    assert main(argv) == 2  # the read-back is loaded first: its error is the one reported
    argv[-1] = "examples/connectors/attempt_keyed_sink.py:read_back"
    assert main(argv) == 2
    assert "has no streamWriter(schema, overwrite)" in capsys.readouterr().err


def test_late_kills_are_the_commit_after_kills_that_found_commits_written() -> None:
    from harness.conformance.certify.runs import late_kills

    fired = [
        {"point": "after_offsets_logged", "batch": 0, "context": {"commit_logged": False}},
        {"point": "sink.commit.after", "batch": 1, "context": {"commit_logged": True}},
        {"point": "sink.commit.after", "batch": 2, "context": {"commit_logged": False}},
        {"point": "sink.commit.after", "batch": 3, "context": {}},
        # A timed kill, a step or a later batch's point may land after commits/N by design: never "late".
        {"point": "batch.time", "batch": 4, "context": {"commit_logged": True}},
        {"point": "after_offsets_logged", "batch": 5, "context": {"commit_logged": True}},
        {"point": "sink.step", "batch": 6, "context": {"commit_logged": True}},
        {"point": "deploy", "batch": 7, "context": {"commit_logged": True}},
    ]
    assert late_kills(fired) == ["sink.commit.after@1"]
    assert late_kills(fired[2:]) == []


@pytest.mark.parametrize(
    ("measured", "verdict", "level"),
    [
        ("exactly-once", "exactly-once", "replayable"),
        ("at-least-once", "violated", "not replayable"),
        ("none", "unknown", "not replayable"),  # the query refused to restart from its checkpoint
        (None, "unknown", None),
    ],
)
def test_a_source_row_through_the_runner_is_replayable_only_when_exactly_once(
    monkeypatch: pytest.MonkeyPatch, measured: str | None, verdict: str, level: str | None
) -> None:
    from harness.conformance.certify import runs

    got = {"measured": measured, "verdict": verdict, "error": None if measured else "no verdict", "note": "n"}
    monkeypatch.setattr(runs, "measure_sink_once", lambda *a, **k: dict(got))
    row = next(r for r in ROWS if r.key == "source:kafka")
    out = runs.measure_source_scenario(row, Path("unused"), 1, None, print)
    assert out["measured"] == level and (out["error"] is None) == (level is not None)


def test_a_runs_page_links_each_anomaly_to_its_batch_and_caps_the_rows(tmp_path: Path) -> None:
    from harness.timeline.page import write_run_page

    anomalies = [
        {"kind": "duplicate", "batch_id": 1, "observed_count": 2, "expected_count": 1, "row": {"offset": n}}
        for n in range(11)
    ] + [{"kind": "lost", "batch_id": None, "observed_count": 0, "expected_count": 1, "row": {"offset": 99}}]
    page = write_run_page(
        tmp_path / "out" / "t.html", _run_dir(tmp_path), "a run", "violated", "summary <1>", anomalies, ["replay: x"]
    ).read_text()
    assert 'id="run-batch-1"' in page and page.count('href="#run-batch-1"') == 8  # 8 shown per kind
    assert "... and 3 more" in page and "duplicate (11)" in page and "no batch" in page
    assert "summary &lt;1&gt;" in page and "replay: x" in page and "data-layout-check" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page), "the page must not load anything from the network"
    empty = write_run_page(tmp_path / "e.html", tmp_path / "nothing", "none", "unknown", "m").read_text()
    assert "no timeline: the run left no checkpoint" in empty
