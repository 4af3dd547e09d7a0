"""A pipeline whose own code raised is a failure of the pipeline (verdict ``pipeline-failed``, exit 1) named by the
exception, its file:line and the batch, with no stack trace in the report; anything else stays what it was (no
Spark: the error texts are those measured from real runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.chaos.campaign import _violates
from harness.engine.outcome import PIPELINE_FAILED, RunOutcome, pipeline_failure
from harness.engine.report import render_text, summary_line, to_json
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec

pytestmark = pytest.mark.unit
PY4J = "/venv/lib/python3.11/site-packages/py4j/clientserver.py"
FOREACH_BATCH = f"""the streaming query failed loudly in driver-1: [STREAM_FAILED] Query [id = 1, runId = 2] \
terminated with exception: [FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided function \
in foreach batch sink. Reason: An exception was raised by the Python Proxy. Return Message: \
Traceback (most recent call last):
  File "{PY4J}", line 644, in _call_proxy
    return_value = getattr(self.pool[obj_id], method)(*params)
  File "/venv/lib/python3.11/site-packages/pyspark/sql/utils.py", line 163, in call
    self.func(DataFrame(jdf, wrapped_session_jdf), batch_id)
  File "/home/me/pipes/my_sink.py", line 12, in write_batch
    ratio = n / 0
ZeroDivisionError: division by zero
 SQLSTATE: 39000 SQLSTATE: XXKST
  log: /tmp/run/logs/driver-1.log"""
#: A query Spark refused to continue after a nemesis: no Python traceback at all.
CHECKPOINT_DAMAGE = (
    "the streaming query failed loudly in driver-1: [STREAM_FAILED] Query [id = 1] terminated with exception: "
    "[CANNOT_LOAD_STATE_STORE.UNCATEGORIZED] An error occured during loading state."
)


def checkpoint(tmp_path: Path, offsets: int, commits: int) -> Path:
    cp = tmp_path / "checkpoint"
    for sub, n in (("offsets", offsets), ("commits", commits)):
        (cp / sub).mkdir(parents=True, exist_ok=True)
        for b in range(n):
            (cp / sub / str(b)).write_text("v1\n{}\n")
    return cp


def outcome_of(tmp_path: Path, error: str) -> RunOutcome:
    outcome = RunOutcome(RunSpec("pipes.my_sink:PIPELINE", 7, kills=0), RunPaths(tmp_path), "exactly-once", [], [])
    outcome.query_failed = True
    failure = pipeline_failure(error, checkpoint(tmp_path, 1, 0), ())
    if failure is None:
        outcome.error = error
    outcome.failure = failure
    return outcome


def test_the_verdict_line_names_the_exception_its_file_line_and_batch(tmp_path: Path) -> None:
    outcome = outcome_of(tmp_path, FOREACH_BATCH)
    assert (outcome.verdict, outcome.exit_code) == (PIPELINE_FAILED, 1)
    assert summary_line(outcome) == (
        "pipeline failed: ZeroDivisionError: division by zero at /home/me/pipes/my_sink.py:12 (batch 0), in "
        "write_batch; the pipeline's own code raised (scenario=pipes.my_sink:PIPELINE, seed=7)"
    )
    text = render_text(outcome)
    assert (
        "\n  Spark's error: [FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided function in "
        "foreach batch sink.\n"
    ) in text
    assert "Traceback" not in text and 'File "' not in text and "clientserver" not in text
    doc = to_json(outcome)
    assert doc["verdict"] == PIPELINE_FAILED and doc["error"] is None and doc["query_failed"] is True
    assert doc["pipeline_failed"]["frame"] == "/home/me/pipes/my_sink.py:12 in write_batch"
    assert doc["pipeline_failed"]["when"] == "batch 0"


def test_a_campaign_stops_at_and_shrinks_a_pipeline_failure(tmp_path: Path) -> None:
    assert _violates(outcome_of(tmp_path, FOREACH_BATCH))
    assert not _violates(outcome_of(tmp_path / "other", CHECKPOINT_DAMAGE))


def test_a_loud_query_failure_without_the_pipelines_frame_stays_no_verdict(tmp_path: Path) -> None:
    outcome = outcome_of(tmp_path, CHECKPOINT_DAMAGE)
    assert outcome.failure is None and (outcome.verdict, outcome.exit_code) == ("unknown", 2)
    assert summary_line(outcome).startswith("query failed loudly, no verdict")
    injected = FOREACH_BATCH.replace(
        "ZeroDivisionError: division by zero", "fault_injectors.kills.InjectedFault: injected fault k1: raise"
    )
    assert outcome_of(tmp_path / "injected", injected).failure is None


def test_the_batch_is_the_planned_uncommitted_one_or_the_one_being_planned(tmp_path: Path) -> None:
    running = pipeline_failure(FOREACH_BATCH, checkpoint(tmp_path / "a", 3, 2), ())
    planning = pipeline_failure(FOREACH_BATCH, checkpoint(tmp_path / "b", 2, 2), ())
    assert running is not None and running.when == "batch 2"
    assert planning is not None and planning.when == "planning batch 2"
    before = pipeline_failure(
        "the streaming query failed loudly in driver-1: the pipeline's own code raised before its query started: "
        "KeyError: 'x'\nTraceback (most recent call last):\n"
        '  File "/home/me/pipes/my_sink.py", line 30, in transform\n    cols["x"]\nKeyError: \'x\'\n',
        tmp_path / "none",
        (),
    )
    assert before is not None and (before.when, before.spark) == ("before its query started", "")
    assert before.describe() == "KeyError: 'x' at /home/me/pipes/my_sink.py:30 (before its query started), in transform"
