"""Volume runs (issue 13): ``RunSpec.volume`` and ``batch_rows`` size a run's data and batches; a chaos profile's
``volume`` scales each drawn example's data and batches by one factor, so its faults keep their batches."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.chaos.strategies import chaos_specs
from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec
from scenarios import get_scenario
from scenarios.admission import plan_batches
from tests.admission import needs_read_limits

STATELESS = get_scenario("file_sink_stateless")  # 2 partitions, 1 row per offset, batches of 40 rows
EVENT_TIME = get_scenario("agg_watermark_append")  # 1 partition, 2 rows per offset, batches of 20 rows


def _total_rows(spec: RunSpec, sc: object) -> int:
    schedule = build_schedule(spec, sc)  # type: ignore[arg-type]
    return sum(sum(op.rows.values()) for op in schedule.ops if op.kind == "add_data") * sc.rows_per_offset  # type: ignore[attr-defined]


@needs_read_limits
def test_a_volume_run_adds_at_least_that_many_rows_in_about_two_batches_a_round() -> None:
    spec = RunSpec(STATELESS.name, 1, kills=3, volume=1_000_000)
    schedule = build_schedule(spec, STATELESS)
    assert 1_000_000 <= _total_rows(spec, STATELESS) < 1_000_000 + 3 * 2
    assert [op.rows for op in schedule.ops if op.kind == "add_data"] == [{0: 166_667, 1: 166_667}] * 3
    assert len(schedule.predicted_batches) == 6 and len(schedule.plan.rules) == 3
    assert spec.effective_batch_rows(STATELESS.max_rows_per_batch) == 166_667
    sc2 = RunSpec(EVENT_TIME.name, 1, kills=2, volume=100_000)
    assert _total_rows(sc2, EVENT_TIME) >= 100_000


@needs_read_limits
def test_batch_rows_decide_how_many_batches_the_same_data_makes() -> None:
    rows = ((300, 300),)
    for batch_rows, batches in ((600, 1), (60, 10), (10, 60)):
        spec = RunSpec(STATELESS.name, 1, kills=0, rows=rows, batch_rows=batch_rows)
        assert len(build_schedule(spec, STATELESS).predicted_batches) == batches, batch_rows
    # A 60-batch run: a kill can be planned in batch 59, past the file sink log's compactions (9, 19, ...).
    spec = RunSpec(STATELESS.name, 1, kills=0, rows=rows, batch_rows=10)
    assert plan_batches({0: 0, 1: 0}, {0: 300, 1: 300}, 10)[59] == build_schedule(spec, STATELESS).predicted_batches[59]


def test_volume_and_batch_rows_are_validated_and_replayed() -> None:
    with pytest.raises(ValueError, match="volume must be >= 1"):
        RunSpec(STATELESS.name, 1, volume=0)
    with pytest.raises(ValueError, match="batch_rows must be >= 1"):
        RunSpec(STATELESS.name, 1, batch_rows=0)
    with pytest.raises(ValueError, match=r"either rows .* or volume"):
        RunSpec(STATELESS.name, 1, rows=((1, 1),), volume=10)
    spec = RunSpec(STATELESS.name, 4, kills=3, volume=10**6, batch_rows=5000)
    assert spec.replay_command().endswith("--volume 1000000 --batch-rows 5000")
    assert RunSpec.from_dict(__import__("json").loads(spec.to_json())) == spec
    assert RunSpec.from_dict({"scenario": STATELESS.name, "seed": 1}).volume is None  # bundles written before


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_volume_campaign_scales_each_example_and_its_batches_alike(data: st.DataObject) -> None:
    shape = data.draw(chaos_specs(STATELESS, max_rounds=3, max_faults=2, seeds=st.just(5)))
    big = data.draw(chaos_specs(STATELESS, max_rounds=3, max_faults=2, seeds=st.just(5), volume=100_000))
    assert big.rows is not None and big.batch_rows is not None
    assert sum(map(sum, big.rows)) * STATELESS.rows_per_offset >= 100_000
    k = big.batch_rows // STATELESS.max_rows_per_batch
    assert all(n % k == 0 for r in big.rows for n in r)
    # Every fault names a batch the scaled run makes.
    batches = len(build_schedule(big, STATELESS).predicted_batches)
    assert all(f.batch is not None and f.batch < batches for f in big.extra_faults)
    assert shape.batch_rows is None
