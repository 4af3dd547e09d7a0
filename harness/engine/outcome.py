"""The outcome of one harness run: what ran, what fired, the verdict."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fault_injectors.plan import FaultRule
from harness.engine.deploy import Refusal
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.verdict.checker import CheckResult
from harness.verdict.state_check import StateCheck


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

    @property
    def verdict(self) -> str:
        if self.refused is not None and not self.error:
            return UPGRADE_REFUSED
        return "unknown" if self.error or self.result is None else self.result.verdict

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.verdict, 2)


#: The verdict of an upgrade run whose new version Spark refused to resume from the checkpoint.
UPGRADE_REFUSED = "upgrade-refused"
#: Exit codes of a run and a campaign by verdict (anything else, ``unknown``: 2).
EXIT_CODES = {"exactly-once": 0, "violated": 1, UPGRADE_REFUSED: 3}
