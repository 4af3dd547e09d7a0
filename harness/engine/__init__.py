"""The run machinery, the only one: a spec and its schedule, the runner that plays it through a pool of
child drivers (warm standby, run tokens, watchdog, ledger), the run directory, its history and outcome, and
the run's text/JSON report.
"""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "Conductor": ("harness.engine.conductor", "Conductor"),
    "DriverPool": ("harness.engine.pool", "DriverPool"),
    "DriverProcess": ("harness.engine.driverproc", "DriverProcess"),
    "DriverStartError": ("harness.engine.pool", "DriverStartError"),
    "HarnessError": ("harness.engine.conductor", "HarnessError"),
    "History": ("harness.engine.history", "History"),
    "Op": ("harness.engine.schedule", "Op"),
    "ProgressLog": ("harness.engine.progress", "ProgressLog"),
    "QueryFailedError": ("harness.engine.conductor", "QueryFailedError"),
    "RunOutcome": ("harness.engine.outcome", "RunOutcome"),
    "RunPaths": ("harness.engine.rundir", "RunPaths"),
    "RunSpec": ("harness.engine.spec", "RunSpec"),
    "Runner": ("harness.engine.runner", "Runner"),
    "Schedule": ("harness.engine.schedule", "Schedule"),
    "build_schedule": ("harness.engine.schedule", "build_schedule"),
    "open_run": ("harness.engine.driver", "open_run"),
    "parse_kill_argument": ("harness.engine.spec", "parse_kill_argument"),
    "read_history": ("harness.engine.history", "read_history"),
    "render_text": ("harness.engine.report", "render_text"),
    "run_spec": ("harness.engine.runner", "run_spec"),
    "summary_line": ("harness.engine.report", "summary_line"),
    "to_json": ("harness.engine.report", "to_json"),
}

__all__ = [
    "Conductor",
    "DriverPool",
    "DriverProcess",
    "DriverStartError",
    "HarnessError",
    "History",
    "Op",
    "ProgressLog",
    "QueryFailedError",
    "RunOutcome",
    "RunPaths",
    "RunSpec",
    "Runner",
    "Schedule",
    "build_schedule",
    "open_run",
    "parse_kill_argument",
    "read_history",
    "render_text",
    "run_spec",
    "summary_line",
    "to_json",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
