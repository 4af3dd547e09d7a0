"""Kafka faults' pure parts: the oracle's ranges when the broker deleted records, losses a setting allows, where a
source nemesis goes in a schedule, ``kill_broker`` finding and killing its broker, the supervisor restarting it,
and campaigns drawing both for Kafka scenarios only."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings

from fault_injectors.kills import InjectedFault
from fault_injectors.plan import FaultRule
from fault_injectors.servers import RESOURCES_FILE, ServerFaultError, kill_server
from harness.chaos.strategies import chaos_specs
from harness.engine.between import Applied, allowed_losses, loss_first
from harness.engine.schedule import build_schedule, known_nemeses
from harness.engine.spec import RunSpec, kill_argument, parse_kill_argument
from harness.inspector.synth import commit_text, offsets_text
from harness.verdict.allowed import allow_losses, allowed_summary
from harness.verdict.checker import AllowedLoss, CheckResult, check_exactly_once
from scenarios import get_scenario
from scenarios.base import ResourceUnavailable
from scenarios.kafka.faults import loss_setting
from scenarios.kafka.offsets import aged_out_ranges, committed_window
from scenarios.kafka.source import KafkaTopic, oracle_ranges
from scenarios.kafka.supervisor import BrokerSupervisor
from scenarios.sources import SourceDamage
from scenarios.tap import TapError, add_partitions, init_tap, read_tap


def _checkpoint(root: Path, ends: list[dict[str, int]], committed: int, start: dict[str, int]) -> Path:
    for d in ("offsets", "commits", "sources/0"):
        (root / d).mkdir(parents=True, exist_ok=True)
    for n, end in enumerate(ends):
        (root / "offsets" / str(n)).write_text(offsets_text([{"t": end}], 0, 1795357150553 + n))
        if n < committed:
            (root / "commits" / str(n)).write_text(commit_text(0))
    (root / "sources" / "0" / "0").write_bytes(b"\x00v1\n" + json.dumps({"t": start}).encode())
    return root


def test_the_oracle_reads_what_the_broker_holds_and_regenerates_what_it_deleted(tmp_path: Path) -> None:
    # Batch 1 (committed) ended at p0=30, p1=12, p2=5 (p2 added later); the broker's log start moved to 25 in p0
    # (an age-out past batch 0's end 20) and to 3 in the new partition p2.
    ck = _checkpoint(tmp_path, [{"0": 20, "1": 10}, {"0": 30, "1": 12, "2": 5}], 2, {"0": 0, "1": 0})
    assert committed_window(ck, "t") == ({0: 0, 1: 0}, {0: 30, 1: 12, 2: 5})
    log_start = {0: 25, 1: 0, 2: 3}
    assert oracle_ranges(ck, "t", log_start) == {0: (25, 30), 1: (0, 12), 2: (3, 5)}
    assert aged_out_ranges(ck, "t", log_start) == {0: (0, 25), 2: (0, 3)}
    # Everything deleted: nothing readable, all regenerated; a log start past the committed end stops there.
    assert oracle_ranges(ck, "t", {0: 40, 1: 12, 2: 5}) == {}
    assert aged_out_ranges(ck, "t", {0: 40, 1: 12, 2: 5}) == {0: (0, 30), 1: (0, 12), 2: (0, 5)}
    # Regenerated records are the ones the harness produced, with an unknown timestamp.
    from scenarios.rowgen import SourceConfig
    from scenarios.sources import SourceRun

    run = SourceRun(SourceConfig(seed=4, partitions=2), "", "", str(ck), "", None, False)
    again = KafkaTopic().regenerated(run, {0: (2, 4)})
    produced = list(KafkaTopic().records(run.config, 0, 2, 4))
    assert [(f.partition, f.offset, f.value, f.timestamp_ms) for f in again] == [
        (0, 2, produced[0].value, -1),
        (0, 3, produced[1].value, -1),
    ]


def _lost(partition: int, offset: int) -> dict[str, object]:
    return {"partition": partition, "offset": offset, "seq": 0, "v": offset}


def test_a_loss_the_setting_allows_is_reported_apart_and_is_no_violation() -> None:
    expected = [_lost(p, o) for p in (0, 1) for o in range(10)]
    observed = [r for r in expected if not (r["partition"] == 0 and 4 <= r["offset"] < 7)]  # type: ignore[operator]
    result = check_exactly_once(expected, observed)
    assert result.verdict == "violated" and result.counts() == {"lost": 3}
    window = AllowedLoss(0, 4, 8, "topic t", "failOnDataLoss=false")
    allowed = allow_losses(result, [window, AllowedLoss(1, 0, 1, "topic t", "failOnDataLoss=false")])
    assert allowed.verdict == "exactly-once" and allowed.anomalies == [] and allowed.counts() == {}
    assert [a.offset for a in allowed.allowed] == [4, 5, 6] and allowed.allowed_losses == [window]
    summary = "3 row(s) lost as allowed by failOnDataLoss=false (topic t partition 0 offsets [4, 8))"
    assert allowed_summary(allowed) == summary
    # A loss outside the window stays a violation; a duplicate is never allowed; unknown stays unknown.
    outside = allow_losses(result, [AllowedLoss(0, 5, 8, "topic t", "failOnDataLoss=false")])
    assert outside.verdict == "violated" and [a.offset for a in outside.anomalies] == [4]
    dup = check_exactly_once(expected, [*expected, expected[5]])
    assert allow_losses(dup, [window]).verdict == "violated"
    unknown = CheckResult("unknown", error="unreadable")
    assert allow_losses(unknown, [window]) is unknown


def test_the_setting_decides_whether_a_loss_is_allowed_and_a_refused_one_leads_the_error() -> None:
    assert loss_setting(()) == ("failOnDataLoss=true", False)
    assert loss_setting((("FAILONDATALOSS", "False"),)) == ("failOnDataLoss=false", True)
    damage = SourceDamage("deleted ...", ((0, 20, 25),), "topic t", "failOnDataLoss=true", False)
    assert SourceDamage.from_json(json.loads(json.dumps(damage.to_json()))) == damage
    applied = [Applied("age_out_records", damage.description, damage), Applied("delete_latest_commit", "deleted")]
    assert allowed_losses(applied) == []
    first = loss_first("the streaming query failed loudly: Some data may have been lost", applied).splitlines()[0]
    assert first == (
        "records deleted before the query read them: topic t partition 0 offsets [20, 25) (nemesis age_out_records); "
        "the query refused to skip them (failOnDataLoss=true)"
    )
    skipped = SourceDamage("deleted ...", ((1, 3, 9),), "topic t", "failOnDataLoss=false", True)
    assert allowed_losses([Applied("age_out_records", "x", skipped)]) == [
        AllowedLoss(1, 3, 9, "topic t", "failOnDataLoss=false")
    ]
    assert loss_first("boom", [Applied("age_out_records", "x", skipped)]) == "boom"


def test_a_source_nemesis_acts_before_the_last_rounds_run_and_unknown_ones_are_refused() -> None:
    kafka, plain = get_scenario("kafka_file_sink"), get_scenario("file_sink_stateless")
    assert {"age_out_records", "add_partitions"} <= set(known_nemeses(kafka))
    assert "age_out_records" not in known_nemeses(plain)
    spec = RunSpec("kafka_file_sink", 1, kills=0, rounds=2, nemesis=("age_out_records", "delete_latest_commit"))
    kinds = [(op.kind, op.name) for op in build_schedule(spec, kafka).ops]
    assert kinds == [
        ("add_data", ""), ("run", ""), ("add_data", ""), ("nemesis", "age_out_records"), ("run", ""),
        ("nemesis", "delete_latest_commit"), ("heal", ""), ("run", ""), ("check", ""),
    ]  # fmt: skip
    assert "source nemesis age_out_records" in build_schedule(spec, kafka).describe()[3]
    with pytest.raises(ValueError, match="unknown nemesis 'age_out_records' for scenario file_sink_stateless"):
        build_schedule(RunSpec("file_sink_stateless", 1, kills=0, nemesis=("age_out_records",)), plain)
    # Raw records with failOnDataLoss=false could not tell an allowed loss from a violation: no age-out there.
    assert "age_out_records" not in KafkaTopic(raw=True, options=(("failOnDataLoss", "false"),)).nemeses()
    assert "age_out_records" in KafkaTopic(raw=True).nemeses()


def test_the_tap_grows_partitions_but_never_takes_one_it_has(tmp_path: Path) -> None:
    tap = tmp_path / "tap.json"
    init_tap(tap, 2)
    assert add_partitions(tap, {2: 7}) == {0: 0, 1: 0, 2: 7} == read_tap(tap)
    with pytest.raises(TapError, match="cannot add partition"):
        add_partitions(tap, {1: 3})


def test_kill_broker_round_trips_and_kills_the_pid_the_broker_file_names(tmp_path: Path) -> None:
    rule = parse_kill_argument("after_offsets_logged:1@kill_broker")
    assert rule.action == "kill_broker" and kill_argument(rule) == "after_offsets_logged:1@kill_broker"
    assert FaultRule("b", "after_commit_logged", 0, action="kill_broker").describe() == (
        "kill broker at after_commit_logged of batch 0"
    )
    faults = tmp_path / "run" / "faults"
    faults.mkdir(parents=True)
    with pytest.raises(ServerFaultError, match="not one given with --kafka"):
        kill_server("kill_broker", "broker_file", faults)
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        (tmp_path / "kafka.json").write_text(json.dumps({"pid": proc.pid}))
        (faults.parent / RESOURCES_FILE).write_text(json.dumps({"broker_file": str(tmp_path / "kafka.json")}))
        assert kill_server("kill_broker", "broker_file", faults) == proc.pid
        assert proc.wait(timeout=5) == -9
        assert kill_server("kill_broker", "broker_file", faults) == 0  # already gone: nothing else is touched
    finally:
        proc.kill()
    assert not issubclass(ServerFaultError, InjectedFault)


class _FakeBroker:
    """A broker whose process is a ``sleep``; ``start`` fails ``fail`` times first."""

    def __init__(self, log: Path, fail: int = 0) -> None:
        self.log_file, self.fail, self.startup_s = log, fail, 0.01
        self.proc = subprocess.Popen(["sleep", "60"], start_new_session=True)

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc.poll() is None else None

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def start(self) -> None:
        if self.fail:
            self.fail -= 1
            raise ResourceUnavailable("port taken")
        self.proc = subprocess.Popen(["sleep", "60"], start_new_session=True)


def _wait(condition: object, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)


def test_the_supervisor_restarts_a_killed_broker_and_gives_up_on_one_that_never_starts(tmp_path: Path) -> None:
    broker = _FakeBroker(tmp_path / "kafka.log", fail=1)
    sup = BrokerSupervisor(broker, delay_s=0.05)  # type: ignore[arg-type]
    sup.start()
    try:
        first = broker.pid
        assert first is not None
        os.killpg(first, 9)
        _wait(lambda: sup.restarts)
        assert len(sup.restarts) == 1 and broker.pid not in (None, first) and sup.broken is None
        assert "restart 1/3 failed: port taken" in (tmp_path / "kafka.log").read_text()
        broker.fail = 5
        os.killpg(broker.pid or 0, 9)
        _wait(lambda: sup.broken)
        assert sup.broken and "did not start again after 3 attempts" in sup.broken and broker.pid is None
    finally:
        sup.close()
        broker.kill()


def _drawn(ref: str, n: int = 60) -> tuple[Counter[str], Counter[str]]:
    scenario = get_scenario(ref)
    actions: Counter[str] = Counter()
    nemeses: Counter[str] = Counter()

    @settings(max_examples=n, database=None, derandomize=True, deadline=None)
    @given(chaos_specs(scenario, max_rounds=2, max_faults=2, ref=ref))
    def draw(spec: RunSpec) -> None:
        again = RunSpec.from_dict(json.loads(spec.to_json()))
        build_schedule(again, scenario)  # every drawn spec schedules, its nemeses known to the scenario
        actions.update(r.action for r in spec.extra_faults)
        nemeses.update(spec.nemesis)

    draw()
    return actions, nemeses


def test_campaigns_draw_broker_kills_and_source_nemeses_for_kafka_scenarios_only() -> None:
    actions, nemeses = _drawn("kafka_file_sink")
    assert actions["kill_broker"] > 0 and actions["kill_process_group"] > actions["kill_broker"], actions
    assert nemeses["age_out_records"] > 0 and nemeses["add_partitions"] > 0, nemeses
    plain_actions, plain_nemeses = _drawn("file_sink_stateless", 30)
    assert plain_actions["kill_broker"] == 0 and not plain_nemeses, (plain_actions, plain_nemeses)


def test_a_broker_given_with_kafka_is_never_drawn_for_a_kill(monkeypatch: pytest.MonkeyPatch) -> None:
    from scenarios.kafka.resource import BOOTSTRAP_ENV, BROKER_FILE_ENV

    monkeypatch.setenv(BOOTSTRAP_ENV, "127.0.0.1:9092")
    monkeypatch.delenv(BROKER_FILE_ENV, raising=False)
    assert KafkaTopic().fault_actions == ()
    monkeypatch.setenv(BROKER_FILE_ENV, "/tmp/kafka.json")
    assert KafkaTopic().fault_actions == ("kill_broker",)
