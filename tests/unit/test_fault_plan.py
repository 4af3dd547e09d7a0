from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fault_injectors.crash import FaultSite, never_fired, read_ledger
from fault_injectors.plan import FaultPlan, FaultPlanError, FaultRule


def test_plan_round_trips_through_json(tmp_path: Path) -> None:
    plan = FaultPlan((FaultRule("a", "after_offsets_logged", 3), FaultRule("b", "sink.write.mid", 1, 0, 7)))
    plan.save(tmp_path / "plan.json")
    assert FaultPlan.load(tmp_path / "plan.json") == plan


@pytest.mark.parametrize(
    ("rule", "fragment"),
    [
        ({"id": "a", "point": "nowhere", "batch": 1}, "field 'point' is 'nowhere'"),
        ({"id": "a", "point": "after_offsets_logged", "batch": -1}, "field 'batch'"),
        ({"id": "a", "batch": 1}, "missing field"),
        ({"id": "a", "point": "sink.write.mid", "probability": 1.5}, "field 'probability'"),
        ({"id": "a", "point": "sink.write.mid", "times": 0}, "field 'times'"),
        ({"id": "a", "point": "after_offsets_logged", "batch": 1, "colour": 2}, "unknown field"),
        ({"id": "a", "point": "after_offsets_logged", "batch": 1, "action": "explode"}, "field 'action'"),
    ],
)
def test_bad_rules_are_refused_naming_the_field(tmp_path: Path, rule: dict[str, object], fragment: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"rules": [rule]}))
    with pytest.raises(FaultPlanError, match=fragment) as err:
        FaultPlan.load(path)
    assert str(path) in str(err.value)


def test_duplicate_ids_and_bad_json_are_refused() -> None:
    with pytest.raises(FaultPlanError, match="duplicate"):
        FaultPlan((FaultRule("a", "after_offsets_logged", 1), FaultRule("a", "sink.write.mid", 2)))
    with pytest.raises(FaultPlanError, match="not valid JSON"):
        FaultPlan.from_json("{")


FIRE = textwrap.dedent(
    """
    import sys
    from fault_injectors.crash import FaultSite
    FaultSite(sys.argv[1]).maybe_fire("after_offsets_logged", int(sys.argv[2]), note="x")
    print("survived")
    """
)


def _fire(fault_dir: Path, batch: int) -> subprocess.CompletedProcess[str]:
    # A real process in its own group: firing must SIGKILL that whole group.
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run(
        [sys.executable, "-c", FIRE, str(fault_dir), str(batch)],
        capture_output=True,
        text=True,
        start_new_session=True,
        env=env,
        timeout=60,
    )


def test_armed_rule_kills_the_process_group_once_and_is_recorded(tmp_path: Path) -> None:
    plan = FaultPlan((FaultRule("k1", "after_offsets_logged", 2),))
    plan.save(tmp_path / "plan.json")
    assert _fire(tmp_path, 1).stdout.strip() == "survived"  # other batch: not armed
    first = _fire(tmp_path, 2)
    assert first.returncode == -9 and "survived" not in first.stdout
    ledger = read_ledger(tmp_path)
    assert [r["rule"]["id"] for r in ledger] == ["k1"]
    assert ledger[0]["context"] == {"note": "x"}
    assert never_fired(plan, ledger) == []
    assert _fire(tmp_path, 2).stdout.strip() == "survived"  # fires at most once, across processes
    assert FaultSite(tmp_path).armed("after_offsets_logged", 2) == []


def test_never_fired_lists_missing_rules(tmp_path: Path) -> None:
    plan = FaultPlan((FaultRule("k1", "after_offsets_logged", 2), FaultRule("k2", "sink.write.mid", 4)))
    assert [r.id for r in never_fired(plan, [{"rule": {"id": "k1"}}])] == ["k2"]


def test_no_fault_dir_means_no_faults() -> None:
    site = FaultSite(None)
    assert site.armed("after_offsets_logged", 0) == []
    site.maybe_fire("after_offsets_logged", 0)


def test_sibling_task_holds_until_the_kill_aimed_at_another_partition_fires(tmp_path: Path) -> None:
    import threading
    import time

    from fault_injectors.crash import FIRED_DIR, SOURCE_TASK_POINTS

    FaultPlan((FaultRule("k1", "sink.write.mid", 3, 0, 10),)).save(tmp_path / "plan.json")
    site = FaultSite(tmp_path)
    t0 = time.monotonic()
    site.hold_for_sibling_fault(SOURCE_TASK_POINTS, 3, 0, 0)  # the target itself never waits
    site.hold_for_sibling_fault(SOURCE_TASK_POINTS, 2, 1, 0)  # another batch: nothing to wait for
    assert time.monotonic() - t0 < 1.0

    def claim() -> None:
        time.sleep(0.3)
        (tmp_path / FIRED_DIR).mkdir(exist_ok=True)
        (tmp_path / FIRED_DIR / "k1.0").touch()  # what firing the kill leaves behind

    threading.Thread(target=claim).start()
    t0 = time.monotonic()
    site.hold_for_sibling_fault(SOURCE_TASK_POINTS, 3, 1, 0, timeout_s=30)
    assert 0.25 <= time.monotonic() - t0 < 10
    assert not (tmp_path / "observations.jsonl").exists()


def test_a_hold_that_times_out_goes_on_and_says_so(tmp_path: Path) -> None:
    from fault_injectors.crash import SOURCE_TASK_POINTS

    FaultPlan(
        (
            FaultRule("k1", "sink.write.mid", 3, 0, 10),
            FaultRule("r1", "source.read", 3, None, action="raise"),  # no partition: aimed at partition 0
            FaultRule("p1", "sink.write.mid", 3, 0, 10, probability=0.5),  # racy by design: never waited for
            FaultRule("u1", "sink.write.mid", 3, 0, 10, times=None),  # fires in every task: never waited for
        )
    ).save(tmp_path / "plan.json")
    FaultSite(tmp_path).hold_for_sibling_fault(SOURCE_TASK_POINTS, 3, 1, 0, timeout_s=0.2)
    [note] = [json.loads(line) for line in (tmp_path / "observations.jsonl").read_text().splitlines()]
    assert note["f"] == "hold_timed_out" and note["value"]["rules"] == ["r1", "k1"]
    assert note["value"]["batch"] == 3 and note["value"]["partition"] == 1


def test_after_a_soft_fault_siblings_wait_to_be_cancelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    import fault_injectors.crash as crash

    monkeypatch.setattr(crash, "SOFT_HOLD_S", 0.3)
    FaultPlan((FaultRule("r1", "source.read", 3, None, action="raise"),)).save(tmp_path / "plan.json")
    site = FaultSite(tmp_path)
    site.hold_for_sibling_fault(crash.SOURCE_TASK_POINTS, 3, 0, 0)  # partition 0 is the target: no wait

    def target_task() -> None:
        time.sleep(0.2)
        with pytest.raises(crash.InjectedFault):
            FaultSite(tmp_path).maybe_fire("source.read", 3, partition=0, attempt=0)

    thread = threading.Thread(target=target_task)
    thread.start()
    t0 = time.monotonic()
    site.hold_for_sibling_fault(crash.SOURCE_TASK_POINTS, 3, 1, 0, timeout_s=30)
    waited = time.monotonic() - t0
    thread.join()
    assert 0.45 <= waited < 10  # until the raise, then the cancellation grace
    [note] = [json.loads(line) for line in (tmp_path / "observations.jsonl").read_text().splitlines()]
    assert note["f"] == "sibling_not_cancelled" and note["value"]["rules"] == ["r1"]
    t0 = time.monotonic()
    site.hold_for_sibling_fault(crash.SOURCE_TASK_POINTS, 3, 1, 0)  # fired already: nothing pending
    assert time.monotonic() - t0 < 0.2
