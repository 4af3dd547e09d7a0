"""The outcome of one harness run: what ran, what fired, the verdict.

Verdicts: ``exactly-once`` (0), ``violated`` (1), ``pipeline-failed`` (1: the pipeline's own code raised, named by
:class:`PipelineFailure`), ``recovery-failed`` (1: Spark failed the query it restarted from its checkpoint after a
crash, :class:`RecoveryFailure`), ``upgrade-refused`` (3), ``unknown`` (2: no verdict, ``error`` says why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fault_injectors.plan import FaultRule
from fault_injectors.registry import UnknownActionError, crashes
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


@dataclass(frozen=True)
class RecoveryFailure:
    """Spark failed a query it had restarted from its checkpoint after a crash: the pipeline's code did not raise,
    no fault fired in that attempt, no nemesis damaged the checkpoint or the input (a benign one, such as new
    Kafka partitions, may have changed it) and no new version was deployed. Spark's contract is that a query
    resumes from its checkpoint after a failure, so this is a failure of the subject (the pipeline on this Spark
    release), not of the run. ``after``: the fault before it (``#14 k2: kill at ...``) and the benign nemeses
    after that; ``when``: the batch the checkpoint shows; ``exception``: the JVM exception class the error names
    (``""`` if none); ``spark``: the first line of Spark's error."""

    after: str
    when: str
    exception: str
    spark: str

    def describe(self) -> str:
        """``restarted after #14 k2: kill at ... of batch 1, the query failed after batch 1 committed: ...``."""
        error = f"{self.exception}: {self.spark}" if self.exception else self.spark
        return f"restarted from its checkpoint after fault {self.after}, the query failed {self.when}: {error}"

    def to_json(self) -> dict[str, Any]:
        return {"after": self.after, "when": self.when, "exception": self.exception, "spark": self.spark}


def _crashed(fired: dict[str, Any]) -> bool:
    """Whether Spark restarts the query (or retries the task) from what it wrote after ``fired``: a process
    died or raised (:func:`fault_injectors.registry.crashes`). A daemon's death, a nemesis and a deploy are
    not: a loud failure after those is no verdict."""
    if fired.get("point") == "deploy" or not isinstance(fired.get("action"), str):
        return False
    try:
        return crashes(fired["action"])
    except UnknownActionError:  # a history recorded with a plugin this process does not have
        return False


def _benign(fired: dict[str, Any]) -> bool:
    """Whether ``fired`` is a nemesis the query must carry on after (``SourceDamage.benign``): a topic growing
    partitions is something a Kafka query meets in production, not damage it may refuse."""
    damage = (fired.get("context") or {}).get("damage")
    return fired.get("action") == "nemesis" and isinstance(damage, dict) and bool(damage.get("benign"))


def recovery_failure(error: str, checkpoint: Path, kills_fired: list[dict[str, Any]]) -> RecoveryFailure | None:
    """The :class:`RecoveryFailure` of a query failure (``error``) after ``kills_fired``; ``None`` when no fault
    that crashes (:func:`_crashed`) fired last before it (benign nemeses aside, :func:`_benign`), or the query
    failed past the batch after the one that fault hit (it had recovered): then the failure is no verdict."""
    crashes_at = [i for i, k in enumerate(kills_fired) if _crashed(k)]
    if not crashes_at:
        return None
    last, since = kills_fired[crashes_at[-1]], kills_fired[crashes_at[-1] + 1 :]
    nemeses = [k for k in kills_fired if k.get("action") == "nemesis"]
    if not all(_benign(k) for k in (*since, *nemeses)):  # damage anywhere may be what Spark refused
        return None
    planned, committed = batch_ids(checkpoint / "offsets"), batch_ids(checkpoint / "commits")
    crashed = last.get("batch")
    if planned and (not committed or planned[-1] > committed[-1]):
        when = f"in batch {planned[-1]}"
        # Recovering: the crashed batch run again, or the next one when the crash came after its commit.
        past = isinstance(crashed, int) and planned[-1] > crashed + 1
    else:  # Spark commits a batch before it reports the batch's progress and plans the next one
        when = f"after batch {committed[-1]} committed" if committed else "before its first batch"
        past = isinstance(crashed, int) and bool(committed) and committed[-1] > crashed
    if past:
        return None  # the query got past the batches the crash touched: a later failure, not its recovery
    after = f"#{last.get('history_index')} {last.get('description')}"
    before = [k for k in nemeses if k not in since]
    if before:  # benign nemeses before the crash: the report needs every one to reproduce it
        after = "; ".join(f"#{k.get('history_index')} {k.get('description')}" for k in before) + f"; then {after}"
    if since:  # and those between the crash and the restart
        after += "".join(f", then #{k.get('history_index')} {k.get('description')}" for k in since)
    return RecoveryFailure(after, when, jvm_exception(error), spark_words(error))


_JVM_EXCEPTION = re.compile(r"\b((?:java|javax|scala|org)\.[\w.$]+(?:Exception|Error))\b")


def jvm_exception(error: str) -> str:
    """The JVM exception class a query failure names: in ``error``, else in the driver log ``error`` names
    (``log: PATH``), on the first such line after Spark's last "terminated with error"; ``""`` if neither does."""
    found = _JVM_EXCEPTION.search(error)
    if found:
        return found.group(1)
    logs = re.findall(r"\blog: (\S+)", error)  # the conductor's own line is the last one
    log = logs[-1] if logs else None
    try:
        text = Path(log).read_text(errors="replace") if log else ""
    except OSError:
        return ""
    tail = text[text.rfind("terminated with error") :] if "terminated with error" in text else ""
    found = _JVM_EXCEPTION.search(tail)
    return found.group(1) if found else ""


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
    #: Spark failed the query it restarted after a crash (verdict ``recovery-failed``; ``error`` keeps Spark's).
    recovery: RecoveryFailure | None = None

    @property
    def verdict(self) -> str:
        if self.refused is not None and not self.error:
            return UPGRADE_REFUSED
        if self.failure is not None and not self.error:
            return PIPELINE_FAILED
        if self.recovery is not None:
            return RECOVERY_FAILED
        return "unknown" if self.error or self.result is None else self.result.verdict

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.verdict, 2)


#: The verdict of an upgrade run whose new version Spark refused to resume from the checkpoint.
UPGRADE_REFUSED = "upgrade-refused"
#: The verdict of a run whose pipeline's own code raised and failed the query: a failure of the pipeline.
PIPELINE_FAILED = "pipeline-failed"
#: The verdict of a run whose query Spark failed after restarting it from its checkpoint (:class:`RecoveryFailure`).
RECOVERY_FAILED = "recovery-failed"
#: Exit codes of a run and a campaign by verdict (anything else, ``unknown``: 2).
EXIT_CODES = {"exactly-once": 0, "violated": 1, PIPELINE_FAILED: 1, RECOVERY_FAILED: 1, UPGRADE_REFUSED: 3}
