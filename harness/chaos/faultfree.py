"""Whether a campaign's minimal failure needs its faults at all.

A campaign's examples carry at least one fault whenever their schedule has room for one
(:func:`harness.chaos.strategies.chaos_specs`), so a pipeline that loses or duplicates rows with no crash (a
sink Delta silently skips half of, a transform that drops rows) is shrunk to a fault it does not need, and its
anomalies cite that fault. One more run of the minimal schedule with its faults and nemesis removed tells the
two apart: when it violates too, it is saved as a bundle of its own (``<work dir>/bundle-fault-free``) and
the campaign says so.
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
    """``spec`` with no explicit fault and no nemesis; ``None`` when it has none, or cannot run without them (a
    fault plan file, seeded ``kills``, an upgrade run: its deploy moment may be a fault's). A campaign's specs
    have explicit faults only (``kills=0``), so the rest of the spec, ``effective_rounds`` included, is kept."""
    if not (spec.extra_faults or spec.nemesis) or spec.kills or spec.fault_plan or spec.upgrade_to:
        return None
    return replace(spec, extra_faults=(), nemesis=())


def fault_free_bundle(
    spec: RunSpec,
    work_dir: Path,
    pool: DriverPool,
    violates: Callable[[RunOutcome], bool],
    echo: Callable[[str], None] = lambda m: None,
    *,
    loud_too: bool = False,
) -> Path | None:
    """The bundle of ``spec``'s fault-free twin, run in ``work_dir/fault-free``, when it violates too (with
    ``loud_too``, for a recovery failure: when its query fails loudly too); ``None``
    otherwise: the faults are needed (the run directory is removed), or the run gave no verdict (kept, and
    ``echo`` says where). The failure already found stands either way."""
    free = without_faults(spec)
    if free is None:
        return None
    paths = RunPaths(work_dir / "fault-free")
    try:
        outcome = Runner(free, paths, echo=lambda m: None, pool=pool).execute()
    except RunRefused:
        return None
    fails_loudly = loud_too and outcome.query_failed  # a recovery failure's twin failing anyway: not the fault
    if outcome.error and not fails_loudly:
        echo(f"fault-free check gave no verdict ({outcome.error.splitlines()[0]}); its run is kept in {paths.root}")
        return None
    if not (violates(outcome) or fails_loudly):
        shutil.rmtree(paths.root, ignore_errors=True)  # as a passing example's: nothing to look at
        return None
    return write_bundle(outcome, work_dir / "bundle-fault-free", to_json(outcome))
