from __future__ import annotations

import pytest

from fault_injectors.plan import FaultRule
from harness.engine.schedule import build_schedule, rules_per_point
from harness.engine.spec import RunSpec
from scenarios import get_scenario
from scenarios.admission import plan_batches
from tests.admission import needs_read_limits


def test_schedule_is_deterministic_in_the_seed() -> None:
    sc = get_scenario("file_sink_stateless")
    a = build_schedule(RunSpec(sc.name, 7, kills=3), sc)
    assert a == build_schedule(RunSpec(sc.name, 7, kills=3), sc)
    assert a != build_schedule(RunSpec(sc.name, 8, kills=3), sc)


def test_schedule_shape_and_kills_name_predicted_batches() -> None:
    sc = get_scenario("foreachbatch_append_naive")
    s = build_schedule(RunSpec(sc.name, 3, kills=3), sc)
    kinds = [op.kind for op in s.ops]
    assert kinds == ["add_data", "run"] * 3 + ["heal", "run", "check"]
    total = {p: sum(op.rows.get(p, 0) for op in s.ops) for p in range(sc.partitions)}
    assert s.predicted_batches[-1][1] == total
    rules = s.plan.rules
    assert len(rules) == 3 and len({r.batch for r in rules}) == 3
    assert {r.point for r in rules} == set(sc.kill_points)  # 3 kills cycle through all 3 points
    assert all(0 <= r.batch < len(s.predicted_batches) for r in rules)
    for r in rules:
        if r.point == "sink.write.mid":
            start, end = s.predicted_batches[r.batch]
            assert r.partition is not None and end[r.partition] > start[r.partition]


@needs_read_limits
def test_predicted_batches_follow_admission() -> None:
    sc = get_scenario("file_sink_stateless")
    s = build_schedule(RunSpec(sc.name, 1, kills=0, rounds=1), sc)
    rows = s.ops[0].rows
    assert list(s.predicted_batches) == plan_batches({0: 0, 1: 0}, rows, sc.max_offsets_per_batch)


def test_explicit_kills_are_added_and_too_many_kills_refused() -> None:
    sc = get_scenario("file_sink_stateless")
    s = build_schedule(RunSpec(sc.name, 1, kills=0, extra_faults=(FaultRule("x1", "sink.commit.after", 2),)), sc)
    assert [(r.id, r.point, r.batch) for r in s.plan.rules] == [("x1", "sink.commit.after", 2)]
    with pytest.raises(ValueError, match="more --rounds or fewer --kills"):
        build_schedule(RunSpec(sc.name, 1, kills=50, rounds=1), sc)


def test_spec_round_trip_and_replay_command(tmp_path: object) -> None:
    spec = RunSpec(
        "file_sink_stateless", 5, kills=0, rounds=2, extra_faults=(FaultRule("x1", "sink.write.mid", 1, 0, 3),)
    )
    assert RunSpec.from_dict(__import__("json").loads(spec.to_json())) == spec
    assert spec.replay_command().endswith("--seed 5 --kills 0 --rounds 2 --kill sink.write.mid:1:0:3")


def test_rules_per_point_one_rule_per_batch_and_mid_write_at_half_the_busiest_partition() -> None:
    batches = [
        ({0: 0, 1: 0}, {0: 3, 1: 2}),
        ({0: 3, 1: 2}, {0: 4, 1: 6}),  # partition 1 is busiest: 4 offsets
        ({0: 4, 1: 6}, {0: 7, 1: 9}),  # a tie (3 and 3): the first partition of `end`
    ]
    points = ("source.latest_offset", "sink.write.mid", "sink.write.mid", "sink.commit.after")
    # The last point has no predicted batch: only sink.write.mid needs one.
    assert rules_per_point(points, batches, 5, rule_id="c{n}") == [
        FaultRule("c1", "source.latest_offset", 0, None, None),
        FaultRule("c2", "sink.write.mid", 1, 1, 10),  # 4 offsets * 5 rows // 2
        FaultRule("c3", "sink.write.mid", 2, 0, 7),  # 3 offsets * 5 rows // 2
        FaultRule("c4", "sink.commit.after", 3, None, None),
    ]


def test_rules_per_point_ids_and_actions() -> None:
    batches = [({0: 0, 1: 0}, {0: 1, 1: 2})]
    rules = rules_per_point(("sink.write.mid", "sink.commit.before"), batches, 1)
    assert [(r.id, r.action) for r in rules] == [
        ("at-sink.write.mid", "kill_process_group"),
        ("at-sink.commit.before", "kill_process_group"),
    ]
    assert (rules[0].partition, rules[0].after_rows) == (1, 1)
    soft = rules_per_point(("sink.write.mid", "sink.commit.before"), batches, 1, action=lambda p: "raise")
    assert [r.action for r in soft] == ["raise", "raise"]
    with pytest.raises(IndexError):
        rules_per_point(("sink.commit.before", "sink.write.mid"), batches, 1)


def test_a_run_keeps_a_ready_standby_only_for_two_driver_kills_or_more(tmp_path: object) -> None:
    from pathlib import Path

    from harness.engine.pool import DriverPool
    from harness.engine.runner import default_standby

    sc = get_scenario("file_sink_stateless")
    raised = tuple(FaultRule(f"r{b}", "sink.commit.after", b, action="raise") for b in (0, 1))
    counts = {
        "three kills": build_schedule(RunSpec(sc.name, 1, kills=3), sc),
        "one kill": build_schedule(RunSpec(sc.name, 1, kills=1), sc),
        "two raises": build_schedule(RunSpec(sc.name, 1, kills=0, extra_faults=raised), sc),
    }
    assert {k: s.driver_kills for k, s in counts.items()} == {"three kills": 3, "one kill": 1, "two raises": 0}
    assert {k: default_standby(s) for k, s in counts.items()} == {
        "three kills": "ready", "one kill": False, "two raises": False,
    }  # fmt: skip
    kills = counts["three kills"]
    ids = [r.id for r in kills.plan.rules]
    assert kills.driver_kills_left(["nemesis", ids[0], "deploy", ids[1]])  # not the plan's: nemesis, deploy
    assert not kills.driver_kills_left([ids[0], "spark-upgrade", ids[1], ids[2]])
    assert not counts["two raises"].driver_kills_left([])
    pool = DriverPool(Path(str(tmp_path)), "local[2]", {})
    for asked, kept in ((True, "warm"), ("ready", "ready"), (False, None), ("warm", "warm")):
        pool.keep_standby(asked)
        assert pool.standby == kept
    hosted = DriverPool(Path(str(tmp_path)), "local[2]", {}, standby="ready", host_jvm=True)
    assert hosted.standby is None  # its next driver attaches to the live JVM: nothing to keep warm
