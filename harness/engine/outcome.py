"""The outcome of one harness run: what ran, what fired, the verdict.

Verdicts: ``exactly-once`` (0), ``violated`` (1), ``pipeline-failed`` (1: the pipeline's own code raised, named by
:class:`PipelineFailure`), ``upgrade-refused`` (3), ``unknown`` (2: no verdict, ``error`` says why).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fault_injectors.plan import FaultRule
from harness.engine.deploy import Refusal
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.inspector import batch_ids
from harness.verdict.checker import CheckResult
from harness.verdict.raised import BEFORE_QUERY, READING_BACK, Raised, find_raised, short_frame, spark_words
from harness.verdict.state_check import StateCheck


@dataclass(frozen=True)
class PipelineFailure:
    """The pipeline's own code raised (in its sink, transform, UDF, source or set-up) and failed the query:
    ``raised`` names the exception and the pipeline's innermost frame, ``when`` the batch (``batch 3``,
    ``planning batch 4``) or the moment (``before its query started``), ``spark`` the first line of Spark's error
    (no traceback)."""

    raised: Raised
    when: str
    spark: str

    def describe(self) -> str:
        """``ZeroDivisionError: division by zero at my_sink.py:12 (batch 0), in write_batch``."""
        r = self.raised
        path, _, func = short_frame(r.frame).partition(" in ")
        return f"{r.exception} at {path} ({self.when}), in {func}"

    def to_json(self) -> dict[str, Any]:
        r = self.raised
        return {"type": r.type, "message": r.message, "frame": r.frame, "outer": r.outer, "when": self.when,
                "spark_error": self.spark}  # fmt: skip


def pipeline_failure(error: str, checkpoint: Path, roots: tuple[str, ...]) -> PipelineFailure | None:
    """The :class:`PipelineFailure` a query failure's ``error`` text shows (a traceback with a frame of the
    pipeline's own code under ``roots`` or outside the harness and libraries, not an injected fault), with the
    batch the checkpoint says was running; ``None`` when the pipeline's code is not what raised."""
    raised = find_raised([error], roots)
    if raised is None:
        return None
    for moment in (BEFORE_QUERY, READING_BACK):
        if moment in error:  # raised in the driver, outside Spark: no Spark error to quote
            return PipelineFailure(raised, moment, "")
    planned, committed = batch_ids(checkpoint / "offsets"), batch_ids(checkpoint / "commits")
    if planned and (not committed or planned[-1] > committed[-1]):
        when = f"batch {planned[-1]}"
    else:  # every planned batch committed: the next one was being planned (a source's latestOffset, say)
        when = f"planning batch {committed[-1] + 1 if committed else 0}"
    return PipelineFailure(raised, when, spark_words(error))


@dataclass
class RunOutcome:
    spec: RunSpec
    paths: RunPaths
    expected_guarantee: str
    schedule_lines: list[str]
    kills_planned: list[dict[str, Any]]
    kills_fired: list[dict[str, Any]] = field(default_factory=list)
    batches: list[dict[str, Any]] = field(default_factory=list)
    result: CheckResult | None = None
    error: str | None = None
    duration_s: float = 0.0
    kept_run_dir: bool = True
    query_failed: bool = False
    #: ``harness.inspector.summarize`` of the checkpoint, attached to every failed run.
    inspector_summary: str | None = None
    #: Planned fault rules that never fired (the run's ``error`` says so); empty when all fired.
    unfired: list[FaultRule] = field(default_factory=list)
    #: The final-state check (``Scenario.final_state``); ``None`` when the scenario declares none.
    state_check: StateCheck | None = None
    #: An upgrade run whose deployed version Spark refused to resume (verdict ``upgrade-refused``).
    refused: Refusal | None = None
    #: The pipeline's own code raised and failed the query (verdict ``pipeline-failed``; ``error`` is then empty).
    failure: PipelineFailure | None = None

    @property
    def verdict(self) -> str:
        if self.refused is not None and not self.error:
            return UPGRADE_REFUSED
        if self.failure is not None and not self.error:
            return PIPELINE_FAILED
        return "unknown" if self.error or self.result is None else self.result.verdict

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.verdict, 2)


#: The verdict of an upgrade run whose new version Spark refused to resume from the checkpoint.
UPGRADE_REFUSED = "upgrade-refused"
#: The verdict of a run whose pipeline's own code raised and failed the query: a failure of the pipeline.
PIPELINE_FAILED = "pipeline-failed"
#: Exit codes of a run and a campaign by verdict (anything else, ``unknown``: 2).
EXIT_CODES = {"exactly-once": 0, "violated": 1, PIPELINE_FAILED: 1, UPGRADE_REFUSED: 3}
