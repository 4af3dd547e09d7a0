"""The final-state check: the state Spark's ``statestore`` reader shows after the run against the scenario's
expected state (``Scenario.final_state``), as multisets of whole rows.

Per expected state variable the driver writes, under ``<oracle>/state/``, ``<operator>-<name>.expected.parquet``
and ``.observed.parquet``; or ``.unreadable.txt`` when Spark's reader cannot read that state for a known reason
(then that variable is not compared, and the run says so); or ``.error.txt`` when the reader failed otherwise
(then the verdict is ``unknown``: a wrong variable name is not a pass). Each differing row is a
``state-mismatch`` anomaly located at the last committed batch, after the fault that preceded it."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.verdict.checker import Anomaly, FaultRef, _key, _preceding_fault

STATE_DIR = "state"
EXPECTED, OBSERVED, UNREADABLE, ERROR = ".expected.parquet", ".observed.parquet", ".unreadable.txt", ".error.txt"
#: The key of an anomaly's row that names the variable (``0-session``).
VARIABLE = "_variable"


def state_file(oracle_dir: str | os.PathLike[str], operator_id: int, name: str, suffix: str) -> Path:
    """Where the driver writes one of a variable's files (``suffix``: :data:`EXPECTED`, :data:`OBSERVED`, ...)."""
    return Path(oracle_dir) / STATE_DIR / f"{operator_id}-{name or 'default'}{suffix}"


@dataclass
class StateCheck:
    """What the final-state check compared: rows per variable (``{"0-session": 9}``), the variables Spark's reader
    cannot read and why, and an ``error`` that leaves the verdict unknown."""

    variables: dict[str, int] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    anomalies: list[Anomaly] = field(default_factory=list)

    def describe(self) -> str:
        if self.error:
            return f"final state not checked, no verdict: {self.error}"
        parts = []
        if self.variables:
            listed = ", ".join(f"{n} ({rows} row(s))" for n, rows in self.variables.items())
            verdict = f"{len(self.anomalies)} row(s) differ" if self.anomalies else "as expected"
            parts.append(f"final state {verdict}: {listed}")
        parts += [f"final state of {n} not checked: {why}" for n, why in self.unreadable.items()]
        return "\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "variables": self.variables,
            "unreadable": self.unreadable,
            "error": self.error,
            "mismatches": len(self.anomalies),
        }


def check_final_state(
    oracle_dir: str | os.PathLike[str], last_batch: int | None, faults: list[FaultRef]
) -> StateCheck | None:
    """Compare every variable the driver wrote; ``None`` when the scenario declares no final state. Never raises:
    input that cannot be read or compared is an ``error``."""
    root = Path(oracle_dir) / STATE_DIR
    if not root.is_dir():
        return None
    check = StateCheck()
    try:
        for path in sorted(root.iterdir()):
            name, _, _ = path.name.partition(".")
            if path.name.endswith(ERROR):
                check.error = f"{name}: {path.read_text().strip()}"
                return check
            if path.name.endswith(UNREADABLE):
                check.unreadable[name] = path.read_text().strip()
            elif path.name.endswith(EXPECTED):
                _compare(check, name, path, path.with_name(name + OBSERVED), last_batch, faults)
    except Exception as exc:  # unreadable files or a failed comparison: no verdict, never a pass
        check.error = f"the final state could not be compared: {exc!r}"
    return check


def _compare(
    check: StateCheck, name: str, expected_path: Path, observed_path: Path, last: int | None, faults: list[FaultRef]
) -> None:
    import pyarrow.parquet as pq

    expected, observed = pq.read_table(expected_path), pq.read_table(observed_path)
    if set(expected.column_names) != set(observed.column_names):
        raise ValueError(
            f"variable {name}: the scenario expects columns {sorted(expected.column_names)}, Spark's reader gives "
            f"{sorted(observed.column_names)}"
        )
    check.variables[name] = observed.num_rows

    want, got = Counter(map(_key, expected.to_pylist())), Counter(map(_key, observed.to_pylist()))
    fault = _preceding_fault(faults, last)
    for row in sorted(want.keys() | got.keys(), key=repr):
        w, g = want[row], got[row]
        if w == g:
            continue
        where = (
            "missing from Spark's state" if g == 0
            else "in Spark's state but not expected" if w == 0
            else "in Spark's state a different number of times"
        )  # fmt: skip
        detail = f"{name}: {where} ({g}x, expected {w}x)"
        check.anomalies.append(
            Anomaly("state-mismatch", last, None, None, None, w, g, {VARIABLE: name, **dict(row)}, fault=fault,
                    detail=detail)
        )  # fmt: skip
