"""Sibling holds (fault_injectors/hold.py): pure logic on a fault directory, tasks simulated by threads."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

import fault_injectors.hold as hold
from fault_injectors.crash import FIRED_DIR, FaultSite
from fault_injectors.hold import SOURCE_TASK_POINTS, hold_for_sibling_fault
from fault_injectors.kills import InjectedFault
from fault_injectors.plan import FaultPlan, FaultRule


def _site(tmp_path: Path, *rules: FaultRule) -> FaultSite:
    FaultPlan(rules).save(tmp_path / "plan.json")
    return FaultSite(tmp_path)


def _notes(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "observations.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _timed(fn: object, *args: object, **kw: object) -> float:
    t0 = time.monotonic()
    fn(*args, **kw)  # type: ignore[operator]
    return time.monotonic() - t0


def _fire_later(tmp_path: Path, rule_id: str, after_s: float) -> threading.Thread:
    def claim() -> None:
        time.sleep(after_s)
        (tmp_path / FIRED_DIR).mkdir(exist_ok=True)
        (tmp_path / FIRED_DIR / f"{rule_id}.0").touch()  # what firing leaves behind

    thread = threading.Thread(target=claim)
    thread.start()
    return thread


def test_a_sibling_waits_for_the_kill_and_then_for_its_own_death(tmp_path: Path) -> None:
    site = _site(tmp_path, FaultRule("k1", "sink.write.mid", 3, 0, 10))
    assert _timed(hold_for_sibling_fault, site, SOURCE_TASK_POINTS, 3, 0, 0) < 0.5  # the target never waits
    assert _timed(hold_for_sibling_fault, site, SOURCE_TASK_POINTS, 2, 1, 0) < 0.5  # another batch: nothing armed
    thread = _fire_later(tmp_path, "k1", 0.3)
    waited = _timed(hold_for_sibling_fault, site, SOURCE_TASK_POINTS, 3, 1, 0, timeout_s=0.6)
    thread.join()
    assert waited >= 0.85  # until the claim, then the kill's grace (a real sibling dies in it)
    assert [n["f"] for n in _notes(tmp_path)] == ["sibling_not_cancelled"]


def test_after_a_soft_fault_at_partition_0_siblings_wait_to_be_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hold, "SOFT_HOLD_S", 0.3)
    site = _site(tmp_path, FaultRule("r1", "source.read", 3, None, action="raise"))  # no partition: partition 0
    hold_for_sibling_fault(site, SOURCE_TASK_POINTS, 3, 0, 0)

    def target_task() -> None:
        time.sleep(0.2)
        with pytest.raises(InjectedFault):
            FaultSite(tmp_path).maybe_fire("source.read", 3, partition=0, attempt=0)

    thread = threading.Thread(target=target_task)
    thread.start()
    waited = _timed(hold_for_sibling_fault, site, SOURCE_TASK_POINTS, 3, 1, 0, timeout_s=30)
    thread.join()
    assert 0.45 <= waited < 10
    [note] = _notes(tmp_path)
    assert note["f"] == "sibling_not_cancelled" and note["value"]["rules"] == ["r1"]  # type: ignore[index]
    assert _timed(hold_for_sibling_fault, site, SOURCE_TASK_POINTS, 3, 1, 0) < 0.2  # fired: nothing pending


def test_two_targets_never_wait_for_each_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hold, "SOFT_HOLD_S", 0.0)
    site = _site(
        tmp_path,
        FaultRule("a", "sink.write.mid", 3, 1, 5, action="raise"),
        FaultRule("b", "source.read", 3, None, action="raise"),  # aimed at partition 0
    )
    assert _timed(hold_for_sibling_fault, site, SOURCE_TASK_POINTS, 3, 0, 0, timeout_s=5) < 0.5
    thread = _fire_later(tmp_path, "b", 0.3)  # partition 1 (a target too) waits for the lower target only
    waited = _timed(hold_for_sibling_fault, site, SOURCE_TASK_POINTS, 3, 1, 0, timeout_s=5)
    thread.join()
    assert 0.25 <= waited < 4


def test_a_target_that_does_not_start_alongside_releases_the_sibling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hold, "START_GRACE_S", 0.2)
    site = _site(tmp_path, FaultRule("k1", "sink.write.mid", 3, 1, 10))
    waited = _timed(hold_for_sibling_fault, site, SOURCE_TASK_POINTS, 3, 0, 0, timeout_s=30)
    assert 0.2 <= waited < 5  # e.g. toLocalIterator: partition 1 runs in a later job
    [note] = _notes(tmp_path)
    assert note["f"] == "hold_released" and note["value"]["rules"] == ["k1"]  # type: ignore[index]


def test_a_started_target_that_never_fires_times_out_and_says_so(tmp_path: Path) -> None:
    site = _site(
        tmp_path,
        FaultRule("k1", "sink.write.mid", 3, 0, 10),
        FaultRule("p1", "sink.write.mid", 3, 0, 10, probability=0.5),  # racy by design: never waited for
        FaultRule("u1", "sink.write.mid", 3, 0, 10, times=None),  # fires in every task: never waited for
    )
    hold_for_sibling_fault(site, SOURCE_TASK_POINTS, 3, 0, 0)  # the target starts (and then never fires)
    hold_for_sibling_fault(site, SOURCE_TASK_POINTS, 3, 1, 0, timeout_s=0.3)
    [note] = _notes(tmp_path)
    assert note["f"] == "hold_timed_out" and note["value"]["rules"] == ["k1"]  # type: ignore[index]
    assert note["value"]["batch"] == 3 and note["value"]["partition"] == 1  # type: ignore[index]


def test_without_a_fault_dir_or_partition_nothing_waits(tmp_path: Path) -> None:
    site = _site(tmp_path, FaultRule("k1", "sink.write.mid", 3, 0, 10))
    assert _timed(hold_for_sibling_fault, FaultSite(None), SOURCE_TASK_POINTS, 3, 1, 0) < 0.1
    assert _timed(hold_for_sibling_fault, site, SOURCE_TASK_POINTS, 3, None, 0) < 0.1
