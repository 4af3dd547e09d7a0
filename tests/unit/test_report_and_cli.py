from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.cli.run import parse_kill
from harness.engine.commandline import harness_prefix, shell_line
from harness.engine.outcome import RunOutcome
from harness.engine.report import MAX_PER_KIND, render_text, to_json
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.verdict.checker import BatchSpan, FaultRef, check_exactly_once


def _outcome(tmp_path: Path, n_dupes: int) -> RunOutcome:
    expected = [{"partition": 0, "offset": o, "seq": 0, "v": o} for o in range(20)]
    result = check_exactly_once(
        expected,
        expected + expected[:n_dupes],
        batches=[BatchSpan(3, {0: 0}, {0: 20})],
        faults=[FaultRef(4, 3, "sink.commit.after", "k1: kill at sink.commit.after of batch 3")],
    )
    return RunOutcome(
        RunSpec("foreachbatch_append_naive", 7, kills=1),
        RunPaths(tmp_path),
        "at-least-once",
        ["0. add data"],
        [{"id": "k1", "description": "kill at sink.commit.after of batch 3"}],
        kills_fired=[{"history_index": 4, "description": "k1: kill at sink.commit.after of batch 3"}],
        result=result,
    )


def test_text_report_layout(tmp_path: Path) -> None:
    text = render_text(_outcome(tmp_path, 11)).splitlines()
    assert text[0] == "exactly-once violated: 11 duplicate (scenario=foreachbatch_append_naive, seed=7)"
    assert text[-1] == f"replay: {shell_line(harness_prefix())} run foreachbatch_append_naive --seed 7 --kills 1"
    examples = [line for line in text if line.startswith("  - batch 3 offsets p0:[0,20)")]
    assert len(examples) == MAX_PER_KIND
    assert "after fault #4" in examples[0]
    assert "  ... and 3 more" in text
    assert any("partition=0" in line and "offset=0" in line for line in text)


def test_json_report_fields(tmp_path: Path) -> None:
    doc = to_json(_outcome(tmp_path, 2))
    assert doc["verdict"] == "violated" and doc["seed"] == 7
    assert {"kind", "batch_id", "partition", "offset"} <= set(doc["anomalies"][0])
    assert doc["anomalies"][0]["batch_id"] == 3
    json.dumps(doc, default=str)


def test_exit_codes(tmp_path: Path) -> None:
    ok = _outcome(tmp_path, 0)
    bad = _outcome(tmp_path, 1)
    assert (ok.verdict, ok.exit_code) == ("exactly-once", 0)
    assert (bad.verdict, bad.exit_code) == ("violated", 1)
    bad.error = "fault k1 never fired"
    assert (bad.verdict, bad.exit_code) == ("unknown", 2)


def test_parse_kill() -> None:
    assert parse_kill("sink.write.mid:3:1:5").after_rows == 5
    assert parse_kill("after_offsets_logged:2").partition is None
    for bad in ("after_offsets_logged", "nowhere:1", "sink.write.mid:x"):
        with pytest.raises(Exception, match="--kill"):
            parse_kill(bad)


def test_cli_rejects_bad_input_before_spark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "no_such_scenario", "--seed", "1"]) == 2
    assert "unknown scenario 'no_such_scenario'" in capsys.readouterr().err
    assert main(["run", "file_sink_stateless", "--seed", "1", "--kills", "99", "--rounds", "1"]) == 2
    assert "fewer --kills" in capsys.readouterr().err
    (tmp_path / "old").write_text("x")
    assert main(["run", "file_sink_stateless", "--seed", "1", "--kills", "0", "--run-dir", str(tmp_path)]) == 2
    assert "is not empty" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["run", "file_sink_stateless", "--kill", "bogus:1"])
    assert exc.value.code == 2
    assert "known crash points" in capsys.readouterr().err


def test_cli_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "file_sink_stateless" in out and "after_commit_logged" in out


def test_cli_rejects_unknown_nemesis_and_bad_fault_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "file_sink_stateless", "--seed", "1", "--nemesis", "shred"]) == 2
    assert "unknown --nemesis 'shred'" in capsys.readouterr().err
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"rules": [{"id": "a", "point": "sink.commit.after", "batch": 1, "when": 3}]}))
    assert main(["run", "file_sink_stateless", "--seed", "1", "--fault-plan", str(plan)]) == 2
    err = capsys.readouterr().err
    assert str(plan) in err and "unknown field(s) ['when']" in err
    plan.write_text(json.dumps({"rules": [{"id": "a", "point": "sink.commit.afterwards", "batch": 1}]}))
    assert main(["run", "file_sink_stateless", "--seed", "1", "--fault-plan", str(plan)]) == 2
    assert "field 'point' is 'sink.commit.afterwards'" in capsys.readouterr().err


def test_kill_executor_needs_a_cluster_master(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"rules": [{"id": "e1", "point": "sink.write.mid", "action": "kill_executor"}]}))
    assert main(["run", "file_sink_stateless", "--seed", "1", "--fault-plan", str(plan)]) == 2
    assert "use --master 'local-cluster[2,1,1024]'" in capsys.readouterr().err


def test_a_runner_refuses_a_directory_that_already_holds_a_run(tmp_path: Path) -> None:
    from harness.engine.runner import HarnessError, Runner

    paths = RunPaths(tmp_path / "run")
    paths.create()
    paths.history.write_text("")
    with pytest.raises(HarnessError, match="already holds a run"):
        Runner(RunSpec("file_sink_stateless", 1, kills=0), paths, echo=lambda m: None)


def test_chaos_and_certify_refuse_a_work_directory_holding_an_earlier_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "example-0001").mkdir()
    assert main(["chaos", "file_sink_stateless", "--work-dir", str(tmp_path / "old")]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert main(["certify", "--keep", str(tmp_path / "old")]) == 2
    assert "is not empty" in capsys.readouterr().err
