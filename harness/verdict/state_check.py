"""The final-state check: the state Spark's ``statestore`` reader shows after the run against the scenario's
expected state (``Scenario.final_state``), as multisets of whole rows.

The driver writes, per expected state variable, ``<oracle>/state/<operator>-<name>.expected.parquet`` and
``.observed.parquet``, or ``<oracle>/state/unreadable.txt`` with the reader's error when Spark cannot read the
state (then nothing is compared, and the run says so). Each differing row is a ``state-mismatch`` anomaly located
at the last committed batch, after the fault that preceded it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.verdict.checker import Anomaly, FaultRef, _preceding_fault
from harness.verdict.multiset import rows_to_check

STATE_DIR = "state"
UNREADABLE = "unreadable.txt"


def state_files(oracle_dir: str | os.PathLike[str], operator_id: int, name: str) -> tuple[Path, Path]:
    """Where the driver writes a variable's expected and observed rows."""
    stem = Path(oracle_dir) / STATE_DIR / f"{operator_id}-{name or 'default'}"
    return stem.with_name(stem.name + ".expected.parquet"), stem.with_name(stem.name + ".observed.parquet")


@dataclass
class StateCheck:
    """What the final-state check compared: rows per variable (``{"0-session": 9}``), or why it could not."""

    variables: dict[str, int] = field(default_factory=dict)
    unreadable: str | None = None
    anomalies: list[Anomaly] = field(default_factory=list)

    def describe(self) -> str:
        if self.unreadable:
            return f"final state not checked: {self.unreadable}"
        listed = ", ".join(f"{n} ({rows} row(s))" for n, rows in self.variables.items())
        verdict = f"{len(self.anomalies)} row(s) differ" if self.anomalies else "as expected"
        return f"final state {verdict}: {listed}"

    def to_json(self) -> dict[str, Any]:
        return {"variables": self.variables, "unreadable": self.unreadable, "mismatches": len(self.anomalies)}


def check_final_state(
    oracle_dir: str | os.PathLike[str], last_batch: int | None, faults: list[FaultRef]
) -> StateCheck | None:
    """Compare every variable the driver wrote; ``None`` when the scenario declares no final state."""
    import pyarrow.parquet as pq

    root = Path(oracle_dir) / STATE_DIR
    if not root.is_dir():
        return None
    if (root / UNREADABLE).exists():
        return StateCheck(unreadable=(root / UNREADABLE).read_text().strip())
    check = StateCheck()
    fault = _preceding_fault(faults, last_batch)
    for expected_path in sorted(root.glob("*.expected.parquet")):
        name = expected_path.name[: -len(".expected.parquet")]
        expected = pq.read_table(expected_path)
        observed = pq.read_table(expected_path.with_name(name + ".observed.parquet"))
        check.variables[name] = observed.num_rows
        exp, obs, _ = rows_to_check(expected, observed.select(expected.column_names), expected.column_names)
        for row, (want, got) in _differences(exp, obs).items():
            where = "missing from Spark's state" if got < want else "in Spark's state but not expected"
            detail = f"{name}: {where} ({got}x, expected {want}x)"
            row_dict = {"state": name, **dict(row)}
            anomaly = Anomaly(
                "state-mismatch", last_batch, None, None, None, want, got, row_dict, fault=fault, detail=detail
            )
            check.anomalies.append(anomaly)
    return check


def _differences(expected: list[dict[str, Any]], observed: list[dict[str, Any]]) -> dict[tuple, tuple[int, int]]:
    """Whole rows whose counts differ, with (expected, observed) counts."""
    from collections import Counter

    from harness.verdict.checker import _norm

    def key(r: dict[str, Any]) -> tuple:
        return tuple(sorted((k, _norm(v)) for k, v in r.items()))

    want, got = Counter(map(key, expected)), Counter(map(key, observed))
    return {k: (want[k], got[k]) for k in want.keys() | got.keys() if want[k] != got[k]}
