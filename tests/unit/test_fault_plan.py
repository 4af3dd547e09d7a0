from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fault_injectors.crash import FaultSite, never_fired, read_ledger
from fault_injectors.plan import ALL_CRASH_POINTS, FaultPlan, FaultPlanError, FaultRule
from scenarios import get_scenario


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


def test_all_crash_points_keep_the_protocol_order_seeds_depend_on() -> None:
    # Scenarios reaching every point use this tuple as kill_points; schedules and strategies draw from it by
    # position, so a reorder would change what every existing seed generates.
    assert ALL_CRASH_POINTS == (
        "source.latest_offset",
        "after_offsets_logged",
        "source.read",
        "sink.write.start",
        "sink.write.mid",
        "sink.write.end",
        "sink.commit.before",
        "sink.commit.after",
        "after_commit_logged",
    )
    for name in ("foreachbatch_sqlite_upsert", "agg_update_naive", "python_sink_transactional"):
        assert get_scenario(name).kill_points == ALL_CRASH_POINTS, name
