"""Verdicts, pure functions of what a run left: the multiset checker and its anomaly taxonomy, the run
directory's verdict (batch spans, located anomalies), losses the configuration allows, Arrow-side narrowing,
and rows shown side by side.
"""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "AllowedLoss": ("harness.verdict.checker", "AllowedLoss"),
    "Anomaly": ("harness.verdict.checker", "Anomaly"),
    "BatchSpan": ("harness.verdict.checker", "BatchSpan"),
    "CheckResult": ("harness.verdict.checker", "CheckResult"),
    "FaultRef": ("harness.verdict.checker", "FaultRef"),
    "allow_losses": ("harness.verdict.allowed", "allow_losses"),
    "batch_spans": ("harness.verdict.check", "batch_spans"),
    "check_exactly_once": ("harness.verdict.checker", "check_exactly_once"),
    "check_run_dir": ("harness.verdict.check", "check_run_dir"),
    "check_tables": ("harness.verdict.check", "check_tables"),
    "locate_by_input": ("harness.verdict.check", "locate_by_input"),
    "row_diff": ("harness.verdict.rowdiff", "row_diff"),
    "rows_to_check": ("harness.verdict.multiset", "rows_to_check"),
}

__all__ = [
    "AllowedLoss",
    "Anomaly",
    "BatchSpan",
    "CheckResult",
    "FaultRef",
    "allow_losses",
    "batch_spans",
    "check_exactly_once",
    "check_run_dir",
    "check_tables",
    "locate_by_input",
    "row_diff",
    "rows_to_check",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
