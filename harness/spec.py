"""Run specifications: everything that determines a run, as frozen data with a
JSON round trip (the seed plus the spec reproduce the run)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fault_injectors.plan import STEP_POINT, FaultRule
from harness.connect import inner_master
from harness.session import DEFAULT_MASTER


@dataclass(frozen=True)
class RunSpec:
    """One harness run: a scenario, a seed and the faults to inject.

    ``kills`` seeded kills are drawn from the scenario's crash points;
    ``extra_faults`` are explicit rules (``--kill``, ``--fault-plan``) added to
    them; ``fault_plan`` remembers the plan file they came from, for replay.
    ``rounds`` add-data/run rounds are played (default: ``max(2, kills)``).
    """

    scenario: str
    seed: int
    kills: int = 3
    rounds: int | None = None
    extra_faults: tuple[FaultRule, ...] = ()
    fault_plan: str | None = None
    nemesis: tuple[str, ...] = ()
    #: Explicit data per round (offset units per partition); overrides the seeded amounts and ``rounds``.
    rows: tuple[tuple[int, ...], ...] | None = None
    master: str = DEFAULT_MASTER
    confs: dict[str, str] = field(default_factory=dict)
    command_timeout_s: float = 300.0
    #: Record the steps of every call of the wrapped sink functions (``faults/census.jsonl``).
    census: bool = False

    def __post_init__(self) -> None:
        if self.kills < 0:
            raise ValueError("kills must be >= 0")
        if self.rounds is not None and self.rounds < 1:
            raise ValueError("rounds must be >= 1")
        if self.command_timeout_s <= 0:
            raise ValueError("command_timeout_s must be > 0")
        inner = inner_master(self.master)
        local = inner == "local" or inner.startswith("local[")
        for rule in self.extra_faults:
            if rule.action == "kill_executor" and local:
                raise ValueError(
                    f"fault rule {rule.id!r}: action kill_executor needs executors separate from the driver; "
                    f"master {self.master!r} runs tasks inside the driver JVM (use --master 'local-cluster[2,1,1024]')"
                )

    @property
    def effective_rounds(self) -> int:
        if self.rows is not None:
            return len(self.rows)
        return self.rounds if self.rounds is not None else max(2, self.kills)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunSpec:
        raw = dict(raw)
        raw["extra_faults"] = tuple(FaultRule.from_dict(r) for r in raw.get("extra_faults", ()))
        raw["nemesis"] = tuple(raw.get("nemesis", ()))
        if raw.get("rows") is not None:
            raw["rows"] = tuple(tuple(int(n) for n in r) for r in raw["rows"])
        return cls(**raw)

    @classmethod
    def load(cls, path: str | Path) -> RunSpec:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json())

    def replay_command(self, python: str = ".venv/bin/python") -> str:
        """One shell line that reruns this spec from scratch."""
        parts = [python, "-m", "harness", "run", self.scenario, "--seed", str(self.seed), "--kills", str(self.kills)]
        if self.rounds is not None:
            parts += ["--rounds", str(self.rounds)]
        if self.fault_plan:
            parts += ["--fault-plan", self.fault_plan]
        for r in self.extra_faults:
            if self.fault_plan and not r.id.startswith("x"):
                continue  # comes from the plan file
            parts += ["--kill", kill_argument(r)]
        for name in self.nemesis:
            parts += ["--nemesis", name]
        if self.master != DEFAULT_MASTER:
            parts += ["--master", self.master]
        if self.census:
            parts.append("--census")
        return " ".join(parts)


def kill_argument(rule: FaultRule) -> str:
    """``rule`` as the argument of ``--kill`` (``POINT:BATCH[:PARTITION[:AFTER_ROWS]]``, or
    ``sink.step:BATCH:STEP[:WRAPPER[:PARTITION]]``); an action other than a kill as a ``@ACTION`` suffix."""
    batch = "" if rule.batch is None else rule.batch
    if rule.point == STEP_POINT:
        text = f"{rule.point}:{batch}:{rule.step}"
        if rule.wrapper is not None or rule.partition is not None:
            text += f":{rule.wrapper or ''}"
        if rule.partition is not None:
            text += f":{rule.partition}"
    else:
        text = f"{rule.point}:{batch}"
        if rule.partition is not None or rule.after_rows is not None:
            text += f":{'' if rule.partition is None else rule.partition}"
        if rule.after_rows is not None:
            text += f":{rule.after_rows}"
    return text if rule.action == "kill_process_group" else f"{text}@{rule.action}"
