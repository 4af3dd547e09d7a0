"""Triggers as a run axis (pure logic): parsing, refusals, scheduled and epoch schedules, the rate source's
offsets, the foreach writer, and the chaos trigger draws."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import Row

from harness.chaos.strategies import chaos_specs
from harness.engine.epochs import EPOCHS_PER_ROUND, newest_committed, read_target, round_target, write_target
from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec
from harness.engine.trigger import parse_interval, parse_trigger, run_trigger, sure_batches
from harness.inspector.synth import commit_text, offsets_text, write_with_crc
from scenarios import get_scenario
from scenarios.admission import plan_batches
from scenarios.foreach_sink import MODES, FileForeachWriter
from scenarios.rate import RateSource, emitted, rate_offsets
from scenarios.tap import advance, init_tap
from tests.admission import needs_read_limits

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "kind", "ms"),
    [
        ("available-now", "available-now", 0),
        ("once", "once", 0),
        ("processing-time:500 milliseconds", "processing-time", 500),
        ("processing-time:interval 1 minute 30 seconds", "processing-time", 90_000),
        ("processing-time:0 seconds", "processing-time", 0),
        ("continuous:1 second", "continuous", 1000),
        ("real-time:5 seconds", "real-time", 5000),
    ],
)
def test_triggers_spark_accepts_parse(text: str, kind: str, ms: int) -> None:
    trigger = parse_trigger(text)
    assert (trigger.kind, trigger.interval_ms, trigger.text()) == (kind, ms, text)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("hourly", "expected one of"),
        ("once:1 second", "takes no interval"),
        ("continuous", "needs an interval"),
        ("processing-time:200milliseconds", "not one Spark accepts"),  # Spark: INVALID_INTERVAL_FORMAT
        ("processing-time:1 month", "month and year"),
        ("processing-time:-1 second", "negative"),
        ("processing-time:2 fortnights", "not one Spark accepts"),
        ("real-time:0 seconds", "not positive"),
    ],
)
def test_triggers_spark_refuses_are_refused_in_one_line(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says) as exc:
        parse_trigger(text)
    assert "\n" not in str(exc.value)


def test_interval_units_add_up() -> None:
    assert parse_interval("1 hour 1 minute 1 second 1 millisecond", "t") == 3_661_001
    assert parse_interval("1.5 seconds", "t") == 1500


def test_a_scenario_refuses_a_trigger_it_cannot_run_under_with_its_reason() -> None:
    with pytest.raises(ValueError, match=r"cannot run under trigger continuous:1 second.*micro-batch"):
        run_trigger(
            RunSpec("file_sink_stateless", 1, trigger="continuous:1 second"), get_scenario("file_sink_stateless")
        )
    with pytest.raises(ValueError, match="runs under: continuous"):
        run_trigger(RunSpec("rate_continuous", 1, trigger="once"), get_scenario("rate_continuous"))


def test_real_time_below_spark_minimum_is_refused_unless_the_conf_lowers_it() -> None:
    spec = RunSpec("kafka_to_kafka", 1, trigger="real-time:1 second")
    assert run_trigger(spec, get_scenario("kafka_to_kafka")).interval_ms == 1000  # the scenario lowers it
    bare = get_scenario("kafka_to_kafka").__class__(**{**get_scenario("kafka_to_kafka").__dict__, "confs": {}})
    with pytest.raises(ValueError, match="minBatchDuration"):
        run_trigger(spec, bare)


def test_default_trigger_is_the_rounds_and_a_scenario_default_applies() -> None:
    assert run_trigger(RunSpec("file_sink_stateless", 1), get_scenario("file_sink_stateless")).kind == "rounds"
    assert run_trigger(RunSpec("rate_continuous", 1), get_scenario("rate_continuous")).kind == "continuous"


def test_spec_replays_its_trigger_and_refuses_one_with_an_upgrade() -> None:
    spec = RunSpec("file_sink_stateless", 4, kills=1, trigger="processing-time:1 second")
    assert spec.replay_args()[-2:] == ["--trigger", "processing-time:1 second"]
    assert RunSpec.from_dict(json.loads(spec.to_json())) == spec
    with pytest.raises(ValueError, match="one change a run"):
        RunSpec("upgrade_filter", 1, trigger="once", upgrade_to="scenarios.library.upgrade_filter:V2")


def test_available_now_sure_batches_is_the_fewest_any_split_makes() -> None:
    rounds = [{0: 30, 1: 10}, {0: 25, 1: 40}, {0: 5, 1: 5}]
    sure = sure_batches("available-now", rounds, 40, kills=2)
    assert sure == len(plan_batches({0: 0, 1: 0}, {0: 60, 1: 55}, 40)) == 3
    per_round = sum(
        len(plan_batches(s, e, 40))
        for s, e in [({0: 0, 1: 0}, {0: 30, 1: 10}), ({0: 30, 1: 10}, {0: 55, 1: 50}), ({0: 55, 1: 50}, {0: 60, 1: 55})]
    )
    assert per_round >= sure
    assert sure_batches("once", rounds, None, kills=1) == 2


@needs_read_limits
def test_scheduled_schedule_aims_kills_at_sure_batches_and_never_mid_write() -> None:
    sc = get_scenario("file_sink_stateless")
    for seed in range(20):
        spec = RunSpec("file_sink_stateless", seed, kills=3, rounds=5, trigger="available-now")
        schedule = build_schedule(spec, sc)
        rows = [op.rows for op in schedule.ops if op.kind == "add_data"]
        sure = sure_batches("available-now", rows, sc.batch_limit, 3)
        assert all(r.batch is not None and r.batch < sure for r in schedule.plan.rules)
        assert all(r.point != "sink.write.mid" for r in schedule.plan.rules)
    with pytest.raises(ValueError, match="every once schedule of these rounds makes 0"):
        build_schedule(RunSpec("file_sink_stateless", 1, kills=3, trigger="once"), sc)


def test_epoch_schedule_aims_kills_at_epochs_the_rounds_commit() -> None:
    sc = get_scenario("kafka_foreach")
    spec = RunSpec("kafka_foreach", 2, kills=4, rounds=3, trigger="real-time:1 second")
    rules = build_schedule(spec, sc).plan.rules
    assert len(rules) == 4 and all(r.batch is not None and r.batch < 3 * EPOCHS_PER_ROUND for r in rules)
    mid = [r for r in rules if r.point == "sink.write.mid"]
    assert all(r.after_rows is not None and r.after_rows <= 3 for r in mid)


def test_round_targets_outlast_timed_kills(tmp_path: Path) -> None:
    assert round_target(1, 2, [], 1000, final=False) == EPOCHS_PER_ROUND
    # a timed kill 400 ms after offsets/3 needs the round that writes offsets/3 to run one epoch past it
    assert round_target(1, 2, [(3, 400)], 1000, final=False) == 6
    assert round_target(2, 2, [(9, 2500)], 1000, final=True) == 14
    write_target(tmp_path, 7)
    assert read_target(tmp_path) == 7


def _rate_checkpoint(root: Path, epochs: list[dict[int, int]], committed: int) -> Path:
    for n, values in enumerate(epochs):
        offset = {str(p): {"value": v, "runTimeMs": 1000 + n} for p, v in values.items()}
        write_with_crc(root / "offsets" / str(n), offsets_text([offset], 0, 1000 + n))
        if n < committed:
            write_with_crc(root / "commits" / str(n), commit_text(0))
    return root


def test_rate_offsets_say_which_values_each_committed_epoch_holds(tmp_path: Path) -> None:
    ckpt = _rate_checkpoint(tmp_path / "ck", [{0: -2, 1: -1}, {0: 4, 1: 3}, {0: 8, 1: 9}, {0: 20, 1: 21}], 3)
    assert rate_offsets({"0": {"value": 4, "runTimeMs": 1}}) == {0: 4}
    assert rate_offsets({"topic": {"0": 1}}) is None
    assert emitted(1, 2, 9) == 5 and emitted(0, 2, -2) == 0
    assert newest_committed(ckpt) == (2, {"0": {"value": 8, "runTimeMs": 1002}, "1": {"value": 9, "runTimeMs": 1002}})
    tap = tmp_path / "tap.json"
    init_tap(tap, 2)
    advance(tap, {0: 5, 1: 5})
    run = SimpleNamespace(checkpoint=str(ckpt), tap=str(tap), config=SimpleNamespace(partitions=2))
    values = list(RateSource()._values(run))  # type: ignore[arg-type]
    assert values == [(0, 1), (2, 1), (4, 1), (1, 1), (3, 1), (6, 2), (8, 2), (5, 2), (7, 2), (9, 2)]
    source = RateSource()
    assert source.caught_up({"0": {"value": 8}, "1": {"value": 9}}, run)  # type: ignore[arg-type]
    assert not source.caught_up({"0": {"value": 6}, "1": {"value": 9}}, run)  # type: ignore[arg-type]
    table = source.input_batches(run, ("value",))  # type: ignore[arg-type]
    assert table is not None and table.num_rows == 10


@pytest.mark.parametrize("mode", MODES)
def test_foreach_writer_appends_or_upserts(tmp_path: Path, mode: str) -> None:
    writer = FileForeachWriter(str(tmp_path), "", "", mode, ("partition", "offset"))
    for _attempt in range(1 if mode == "epoch" else 2):  # the same epoch twice, as after a restart
        assert writer.open(0, 3)
        for offset in range(3):
            writer.process(Row(partition=0, offset=offset, value=offset * 10))
        writer.close(None)
    if mode == "append":
        lines = (tmp_path / "rows-0.jsonl").read_text().splitlines()
        assert len(lines) == 6
    elif mode == "epoch":  # the second open of (0, 3) is skipped: the pair was published
        assert writer.open(0, 3) is False
        assert [p.name for p in (tmp_path / "epochs").iterdir()] == ["0-3.jsonl"]
        assert len((tmp_path / "epochs" / "0-3.jsonl").read_text().splitlines()) == 3
    else:
        assert sorted(p.name for p in (tmp_path / "rows").iterdir()) == ["0-0.json", "0-1.json", "0-2.json"]
    with pytest.raises(ValueError, match="not one of"):
        FileForeachWriter(str(tmp_path), "", "", "merge", ())


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_chaos_draws_a_trigger_and_aims_faults_where_every_run_reaches(data: st.DataObject) -> None:
    sc = get_scenario("foreachbatch_append_naive")
    triggers = ("available-now", "once", "processing-time:1 second")
    spec = data.draw(chaos_specs(sc, max_rounds=2, max_faults=2, triggers=triggers, rounds=5))
    assert spec.trigger in triggers and spec.effective_rounds == 5
    trigger = parse_trigger(spec.trigger or "")
    if trigger.scheduled:
        limit = None if trigger.kind == "once" else sc.batch_limit
        sure = sure_batches(trigger.kind, [dict(enumerate(r)) for r in spec.rows or ()], limit, 2)
        assert all(f.batch is not None and f.batch < sure for f in spec.extra_faults)
        assert all(f.point != "sink.write.mid" for f in spec.extra_faults)
    build_schedule(spec, sc)  # a drawn spec is always playable


def test_the_inspector_reads_an_epoch_checkpoint_and_names_a_gap(tmp_path: Path) -> None:
    from harness.inspector import inspect_checkpoint

    epochs = [{0: -2, 1: -1}, {0: 4, 1: 3}, {0: 8, 1: 9}, {0: 20, 1: 21}, {0: 30, 1: 31}]
    ckpt = _rate_checkpoint(tmp_path / "ck", epochs, 5)
    write_with_crc(ckpt / "metadata", json.dumps({"id": "00000000-0000-0000-0000-00000000000e"}))
    report = inspect_checkpoint(ckpt)
    assert report.ok and [r.batch_id for r in report.timeline] == [0, 1, 2, 3, 4]
    (ckpt / "commits" / "2").unlink()
    (ckpt / "commits" / ".2.crc").unlink()
    report = inspect_checkpoint(ckpt)
    assert [(f.id, f.path) for f in report.violations] == [("commits-gap", str(ckpt / "commits" / "2"))]
    assert report.exit_code == 1


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_chaos_under_once_always_places_its_faults_where_jobs_reach(data: st.DataObject) -> None:
    """At most rounds // 2 faults, each below rounds - faults: every example exercises a fault that fires."""
    sc = get_scenario("file_sink_stateless")
    spec = data.draw(chaos_specs(sc, max_rounds=2, max_faults=3, triggers=("once",), rounds=4))
    faults = spec.extra_faults
    assert 1 <= len(faults) <= 2 and all(f.batch is not None and f.batch < 4 - len(faults) for f in faults)


def test_fractions_are_seconds_only_and_parts_are_spaced() -> None:
    with pytest.raises(ValueError, match="fraction in seconds only"):
        parse_trigger("processing-time:1.5 minutes")
    with pytest.raises(ValueError, match="not one Spark accepts"):
        parse_trigger("processing-time:1 second2 seconds")
