"""The state-maintenance crash points (``state.snapshot``, ``state.purge``): the rules' contract, and the
checkpoint watcher firing them in a real child process that it SIGKILLs, on files written by hand (no Spark)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fault_injectors.crash import PLAN_FILE, read_ledger
from fault_injectors.plan import PURGE_POINT, SNAPSHOT_POINT, FaultPlan, FaultPlanError, FaultRule
from harness.cli.run import parse_kill
from harness.engine.spec import kill_argument
from tests.unit.watcher_child import run_watcher

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("point", [SNAPSHOT_POINT, PURGE_POINT])
def test_a_maintenance_point_is_a_sigkill_of_a_named_batch(point: str) -> None:
    assert kill_argument(parse_kill(f"{point}:34")) == f"{point}:34"
    with pytest.raises(FaultPlanError, match=r"can only take the driver down \(action kill_process_group.*not raise"):
        FaultRule("x", point, 3, action="raise")
    with pytest.raises(FaultPlanError, match="needs a batch"):
        FaultRule("x", point, None)
    with pytest.raises(FaultPlanError, match=f"field 'partition' does not apply to {point}"):
        FaultRule("x", point, 3, partition=1)
    with pytest.raises(FaultPlanError, match="fires once"):
        FaultRule("x", point, 3, times=None)
    assert "maintenanceInterval" in FaultRule("x", point, 3).why_unfired()


def watch(tmp_path: Path, rule: FaultRule, before: Callable[[Path], None], after: Callable[[Path], None]) -> Any:
    """Run the watcher for ``rule`` in a child process in its own session; ``before`` changes the checkpoint
    while it must not fire, ``after`` makes it fire. Returns the ledger record."""
    faults, checkpoint = tmp_path / "faults", tmp_path / "checkpoint"
    faults.mkdir(parents=True)
    FaultPlan((rule,)).save(faults / PLAN_FILE)
    run_watcher(faults, checkpoint, before, after)
    (record,) = read_ledger(faults)
    return record


def checkpoint_with(root: Path, state: list[str], commits: list[int]) -> None:
    for name in state:
        (root / "state" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "state" / name).write_bytes(b"x")
    (root / "commits").mkdir(parents=True, exist_ok=True)
    for n in commits:
        (root / "commits" / str(n)).write_text("v1\n")


def test_the_watcher_kills_as_the_full_copy_of_the_batchs_version_appears(tmp_path: Path) -> None:
    """Batch 9 writes version 10: its changelog, a full copy of another version, or a copy that was there before
    the watcher started do not fire; ``10.zip`` appearing in another partition does."""
    checkpoint_with(tmp_path / "checkpoint", ["0/0/10.zip", "0/0/5.zip"], [0])

    def before(ck: Path) -> None:
        checkpoint_with(ck, ["0/1/10.changelog", "0/1/9.zip", "0/1/11.snapshot"], [])

    record = watch(
        tmp_path, FaultRule("s", SNAPSHOT_POINT, 9), before, lambda ck: checkpoint_with(ck, ["0/1/10.zip"], [])
    )
    assert record["batch"] == 9 and record["context"]["via"] == "checkpoint-watcher"
    assert record["context"]["description"] == "state/0/1/10.zip appeared"


def test_the_watcher_kills_at_the_first_state_file_deleted_once_the_batch_committed(tmp_path: Path) -> None:
    """A deletion while the newest commit is before batch 5 does not fire; the next one after ``commits/5`` does."""
    checkpoint_with(tmp_path / "checkpoint", [f"0/0/{v}.delta" for v in range(1, 8)], [0, 1, 2, 3])

    def before(ck: Path) -> None:
        (ck / "state" / "0" / "0" / "1.delta").unlink()

    def after(ck: Path) -> None:
        checkpoint_with(ck, [], [4, 5])
        time.sleep(0.2)  # the commit is seen first (a purge before it must not count)
        (ck / "state" / "0" / "0" / "2.delta").unlink()

    record = watch(tmp_path, FaultRule("p", PURGE_POINT, 5), before, after)
    ctx = record["context"]
    assert record["batch"] == 6 and ctx["after_commit"] == 5, "it lands in the batch after commits/5"
    assert ctx["description"] == "state/0/0/2.delta deleted (1 state file(s) gone) after commits/5"
