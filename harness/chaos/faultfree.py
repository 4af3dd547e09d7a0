"""Whether a campaign's minimal failure needs its faults at all.

A campaign's examples always carry at least one fault (:func:`harness.chaos.strategies.chaos_specs`), so a
pipeline that loses or duplicates rows with no crash (a sink Delta silently skips half of, a transform that
drops rows) is shrunk to one fault it does not need, and its anomalies cite that fault. One more run of the
minimal schedule with its faults and nemesis removed tells the two apart: when it violates too, it is saved
as a bundle of its own (``<work dir>/bundle-fault-free``) and the campaign says so.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from harness.chaos.bundle import write_bundle
from harness.engine.outcome import RunOutcome
from harness.engine.pool import DriverPool
from harness.engine.report import to_json
from harness.engine.rundir import RunPaths
from harness.engine.runner import Runner, RunRefused
from harness.engine.spec import RunSpec


def without_faults(spec: RunSpec) -> RunSpec | None:
    """``spec`` with no fault and no nemesis; ``None`` when it has none, or cannot run without them (a fault plan
    file, an upgrade run: its deploy moment may be a fault's)."""
    if not (spec.extra_faults or spec.nemesis) or spec.fault_plan or spec.upgrade_to:
        return None
    return replace(spec, kills=0, extra_faults=(), nemesis=())


def fault_free_bundle(
    spec: RunSpec, work_dir: Path, pool: DriverPool, violates: Callable[[RunOutcome], bool]
) -> Path | None:
    """The bundle of ``spec``'s fault-free twin, run in ``work_dir/fault-free``, when it violates too; ``None``
    otherwise (the faults are needed, or the run gave no verdict: the failure then stands as shrunk)."""
    free = without_faults(spec)
    if free is None:
        return None
    paths = RunPaths(work_dir / "fault-free")
    try:
        outcome = Runner(free, paths, echo=lambda m: None, pool=pool).execute()
    except RunRefused:
        return None
    if outcome.error or not violates(outcome):
        if not outcome.error:  # as a passing example's: nothing to look at
            shutil.rmtree(paths.root, ignore_errors=True)
        return None
    return write_bundle(outcome, work_dir / "bundle-fault-free", to_json(outcome))
