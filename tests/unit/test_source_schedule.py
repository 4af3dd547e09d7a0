"""Source chaos campaigns, the pure parts: schedules (with a context and context-less), subjects, replay keys,
bundle documents, kill arming, the report, CLI errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import find, given, settings

from harness.cli.main import main
from harness.conformance.source.bundle import load_source_bundle
from harness.conformance.source.schedule import SourceSchedule, SourceSubject, anomaly_keys, source_schedules
from tests.admission import needs_admission_control

EX = "examples/connectors"


@given(source_schedules(max_rounds=2, max_faults=1))
@settings(max_examples=50, deadline=None)
def test_drawn_schedules_respect_the_profile(schedule: SourceSchedule) -> None:
    assert 1 <= len(schedule.rounds) <= 3 and schedule.kills <= 1
    assert all(rows >= 1 for rows, _ in schedule.rounds)


def test_the_simplest_schedule_is_one_row_without_a_kill() -> None:
    assert find(source_schedules(2, 2), lambda s: True) == SourceSchedule(((1, None),))


def test_describe_names_rows_and_kills() -> None:
    s = SourceSchedule(((29, "after_offsets_logged"), (1, None)))
    assert s.describe() == "2 round(s): 29 rows + kill at after_offsets_logged; 1 rows" and s.kills == 1


def test_replay_keys_compare_rows_and_counts_not_order() -> None:
    a = {"kind": "duplicate", "row": {"line": 1, "partition": 0}, "observed_count": 2, "expected_count": 1}
    b = {"kind": "duplicate", "row": {"partition": 1, "line": 1}, "observed_count": 2, "expected_count": 1}
    assert anomaly_keys([a, b]) == anomaly_keys([b, a])
    assert anomaly_keys([a]) != anomaly_keys([{**a, "observed_count": 3}])
    assert anomaly_keys([a]) != anomaly_keys([{**a, "row": {"line": 2, "partition": 0}}])


def test_a_bundle_document_gives_back_its_subject_and_schedule() -> None:
    subject = SourceSubject(f"{EX}/jsonl_source.py:JsonlSource", f"{EX}/_jsonl.py:log_context", {"k": "v"})
    doc = {"subject": subject.__dict__, "schedule": [[3, "after_commit_logged"], [1, None]]}
    assert load_source_bundle(doc) == (subject, SourceSchedule(((3, "after_commit_logged"), (1, None))))
    assert subject.command() == (
        f"--source {EX}/jsonl_source.py:JsonlSource --context {EX}/_jsonl.py:log_context --option k=v"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give a scenario or --source PATH.py:CLASS (one of them)"),
        (["file_sink_stateless", "--source", f"{EX}/jsonl_source.py:JsonlSource"], "one of them"),
        pytest.param(
            ["--source", f"{EX}/jsonl_source.py:Nope", "--context", f"{EX}/_jsonl.py:log_context"],
            "has no attribute",
            marks=needs_admission_control,
        ),
    ],
)
def test_chaos_source_refuses_bad_input_in_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    assert main(["chaos", *args, "--work-dir", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


def test_a_run_that_stalled_is_a_violation_even_when_its_rows_match(tmp_path: Path) -> None:
    from harness.conformance.source.run import SourceOutcome
    from harness.conformance.source.schedule import verdict_of
    from harness.verdict.checker import CheckResult

    ok = SourceOutcome(tmp_path, result=CheckResult("exactly-once"))
    assert verdict_of(ok) == ("exactly-once", {})
    stalled = SourceOutcome(tmp_path, result=CheckResult("exactly-once"), stalls=[2])
    assert verdict_of(stalled) == ("violated", {"stalled": 1})
    assert verdict_of(SourceOutcome(tmp_path, error="boom", stalls=[1]))[0] == "unknown"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"kind": "source", "verdict": "violated"}, "not a source campaign bundle (KeyError"),
        (
            {
                "kind": "source",
                "subject": {"source": f"{EX}/moved_away.py:Gone", "context": f"{EX}/_jsonl.py:log_context"},
                "schedule": [[1, None]],
                "verdict": "violated",
                "anomalies": [],
            },
            "moved_away.py",
        ),
    ],
)
def test_replay_of_a_bad_source_bundle_exits_2_in_one_line(
    doc: dict[str, object],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import json

    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    (tmp_path / "bundle.json").write_text(json.dumps(doc))
    assert main(["replay", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err


def test_chaos_source_refuses_flags_it_cannot_honour(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = ["chaos", "--source", f"{EX}/jsonl_source.py:JsonlSource", "--workers", "2", "--nemesis", "x"]
    assert main([*args, "--work-dir", str(tmp_path / "w")]) == 2
    assert "chaos --source does not take --workers, --nemesis" in capsys.readouterr().err
