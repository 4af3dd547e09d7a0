"""Before blaming a pipeline, the harness checks its own step: a DStream batch whose published input its own
observer never read ends as no verdict naming the batch and the files, not as rows "lost" by the pipeline.

Simulated with the trap that found it: a run directory holding ``:`` (the command line refuses one now; the
engine's API takes it), under which Spark's file stream finds nothing."""

from __future__ import annotations

from pathlib import Path

from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec

APP = "tests.integration.user_modules.orders_dstream:ORDERS"


def test_input_the_application_never_read_is_no_verdict_naming_batch_and_files(tmp_path: Path) -> None:
    outcome = run_spec(RunSpec(APP, 7, kills=0, rounds=1), tmp_path / "run:dir", echo=lambda m: None)
    assert outcome.verdict == "unknown" and outcome.exit_code == 2, (outcome.verdict, outcome.error)
    error = outcome.error or ""
    assert "DStream batch 0 " in error and "read 0 row(s), but the harness published p0000-" in error, error
    assert "the harness's feed, not the pipeline: no verdict" in error
    assert outcome.result is None or not outcome.result.anomalies  # nothing blamed on the pipeline
