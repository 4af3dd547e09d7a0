from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings

from harness.chaos.bundle import anomaly_keys, load_bundle
from harness.chaos.profiles import PROFILE_ENV, PROFILES, get_profile
from harness.chaos.strategies import chaos_specs, describe_spec
from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec
from scenarios import get_scenario

NAIVE = get_scenario("foreachbatch_append_naive")


@settings(max_examples=60, deadline=None)
@given(chaos_specs(NAIVE, max_rounds=3, max_faults=3, hard_kill_ratio=0.5))
def test_drawn_specs_are_valid_and_faults_name_predicted_batches(spec: RunSpec) -> None:
    schedule = build_schedule(spec, NAIVE)
    assert spec.rows is not None and 1 <= len(spec.rows) <= 3
    assert len(schedule.plan.rules) <= 3
    n_batches = len(schedule.predicted_batches)
    pairs = set()
    for rule in schedule.plan.rules:
        assert rule.point in NAIVE.kill_points
        assert rule.batch is not None and 0 <= rule.batch < n_batches
        assert rule.action in ("raise", "kill_process_group")
        assert (rule.batch, rule.point) not in pairs
        pairs.add((rule.batch, rule.point))
        if rule.point == "sink.write.mid":
            start, end = schedule.predicted_batches[rule.batch]
            assert rule.partition is not None and end[rule.partition] > start[rule.partition]
    assert RunSpec.from_dict(json.loads(spec.to_json())) == spec
    assert describe_spec(spec).startswith(f"seed {spec.seed}, {len(spec.rows)} round(s)")


@settings(max_examples=30, deadline=None)
@given(chaos_specs(NAIVE, hard_kill_ratio=0.0))
def test_zero_hard_kill_ratio_draws_only_soft_faults(spec: RunSpec) -> None:
    assert all(r.action == "raise" for r in spec.extra_faults)


def test_explicit_rows_drive_the_schedule() -> None:
    spec = RunSpec(NAIVE.name, 1, kills=0, rows=((5, 7), (0, 3)))
    s = build_schedule(spec, NAIVE)
    assert [op.rows for op in s.ops if op.kind == "add_data"] == [{0: 5, 1: 7}, {0: 0, 1: 3}]
    with pytest.raises(ValueError, match="2 amounts per round"):
        build_schedule(RunSpec(NAIVE.name, 1, kills=0, rows=((5,),)), NAIVE)


def test_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_profile("nightly").timed_kills and not get_profile("ci").timed_kills
    assert get_profile("nightly").examples > get_profile("dev").examples > get_profile("ci").examples
    monkeypatch.setenv(PROFILE_ENV, "nightly")
    assert get_profile().name == "nightly"
    assert get_profile("ci").name == "ci"
    assert get_profile("ci").with_examples(9).examples == 9 and PROFILES["ci"].examples == 3
    with pytest.raises(KeyError, match="known: dev, ci, nightly"):
        get_profile("weekly")


def test_bundle_loading_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such bundle file"):
        load_bundle(tmp_path)
    (tmp_path / "bundle.json").write_text("{}")
    with pytest.raises(ValueError, match="not a harness replay bundle"):
        load_bundle(tmp_path)
    spec = RunSpec(NAIVE.name, 3, kills=0, rows=((1, 2),))
    (tmp_path / "bundle.json").write_text(json.dumps({"spec": json.loads(spec.to_json()), "verdict": "violated"}))
    assert load_bundle(tmp_path)[0] == spec


def test_anomaly_keys_ignore_order_and_row_details() -> None:
    a = {"kind": "duplicate", "batch_id": 1, "partition": 0, "offset": 3, "seq": 0, "row": {"x": 1}}
    b = {**a, "offset": 2, "row": {"x": 2}}
    assert anomaly_keys([a, b]) == anomaly_keys([b, {**a, "row": {}}])


@settings(max_examples=40, deadline=None)
@given(chaos_specs(NAIVE, max_faults=2))
def test_every_drawn_example_has_at_least_one_fault(spec: RunSpec) -> None:
    assert len(spec.extra_faults) >= 1


def test_parallel_shares_and_worker_seeds() -> None:
    from harness.chaos.parallel import shares, worker_seed

    assert shares(5, 2) == [3, 2] and shares(1, 4) == [1] and shares(6, 3) == [2, 2, 2]
    assert sum(shares(20, 7)) == 20 and max(shares(20, 7)) - min(shares(20, 7)) <= 1
    assert worker_seed(1, 0) == 1  # one worker is exactly the plain campaign
    seeds = [worker_seed(1, i) for i in range(8)]
    assert len(set(seeds)) == 8 and all(0 <= s < 2**31 for s in seeds)
    assert seeds == [worker_seed(1, i) for i in range(8)]  # deterministic


def test_bench_draws_the_ci_campaigns_own_schedules_deterministically() -> None:
    from harness.bench.chaos import campaign_specs, worst_case_specs

    first = campaign_specs("file_sink_stateless", 6)
    assert first == campaign_specs("file_sink_stateless", 6) and len(first) == 6
    assert all(spec.extra_faults for spec in first)  # every example exercises a fault
    actions = {r.action for spec in first for r in spec.extra_faults}
    assert actions == {"raise", "kill_process_group"}  # the profile's mix of soft faults and hard kills
    worst = worst_case_specs("agg_watermark_append", 2)
    assert all(any(r.action == "kill_process_group" for r in spec.extra_faults) for spec in worst)


def test_bench_cold_design_starts_drivers_without_the_startup_trims(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from harness.bench.chaos import startup
    from harness.spark import cds
    from harness.spark.session import SITEPATH, ZIP_IMPORTS_ENV, spark_env

    archive = tmp_path / "a.jsa"
    archive.write_bytes(b"x")
    monkeypatch.setattr(cds, "archive_path", lambda options: archive)
    monkeypatch.delenv(cds.CDS_ENV, raising=False)
    monkeypatch.delenv(ZIP_IMPORTS_ENV, raising=False)
    with startup(False):
        assert SITEPATH not in spark_env()["PYTHONPATH"].split(os.pathsep)
        assert cds.java_options("-XX:+UseSerialGC") == "-XX:+UseSerialGC"
    assert cds.CDS_ENV not in os.environ and ZIP_IMPORTS_ENV not in os.environ
    monkeypatch.setenv(cds.CDS_ENV, "0")  # a user's opt-outs, which the trimmed designs must not inherit
    monkeypatch.setenv(ZIP_IMPORTS_ENV, "1")
    with startup(True):
        assert SITEPATH in spark_env()["PYTHONPATH"].split(os.pathsep)
        assert cds.java_options("-XX:+UseSerialGC") == f"-XX:+UseSerialGC -XX:SharedArchiveFile={archive}"
    assert os.environ[ZIP_IMPORTS_ENV] == "1" and os.environ[cds.CDS_ENV] == "0"


def _fake_census(
    seed: int, rows: object, batch_rows: int | None = None
) -> dict[int, list[tuple[str, int | None, tuple[int, ...]]]]:
    """A census as CensusCache gives it, each call's effect boundaries: batch 2 has no traced call, odd batches
    a commit with boundaries 2, 5 and 9, every other batch a write per partition with boundaries (1, 4) and
    (3, 4, 7, 8)."""
    spec = RunSpec(NAIVE.name, seed, kills=0, rows=rows, batch_rows=batch_rows)  # type: ignore[arg-type]
    n = len(build_schedule(spec, NAIVE).predicted_batches)
    odd = [("commit", None, (2, 5, 9))]
    even = [("write", 0, (1, 4)), ("write", 1, (3, 4, 7, 8))]
    return {b: odd if b % 2 else even for b in range(n) if b != 2}


@settings(max_examples=80, deadline=None)
@given(chaos_specs(NAIVE, max_rounds=3, max_faults=3, steps=_fake_census))
def test_step_faults_land_only_where_the_census_has_that_step(spec: RunSpec) -> None:
    census = _fake_census(spec.seed, spec.rows)
    step_batches = []
    for rule in build_schedule(spec, NAIVE).plan.rules:
        if rule.point != "sink.step":
            assert rule.step is None and rule.wrapper is None
            continue
        assert rule.batch in census, "a step fault in a batch without traced calls"
        points = {(w, p): b for w, p, b in census[rule.batch]}
        assert (rule.wrapper, rule.partition) in points
        assert rule.step in points[(rule.wrapper, rule.partition)], "a step fault off the call's effect boundaries"
        step_batches.append(rule.batch)
    assert len(step_batches) == len(set(step_batches)), "two step faults in one batch"
    assert RunSpec.from_dict(json.loads(spec.to_json())) == spec


def test_step_faults_are_drawn_often_and_only_with_a_census() -> None:
    from hypothesis import find

    def has_step(spec: RunSpec) -> bool:
        return any(r.point == "sink.step" for r in spec.extra_faults)

    def draw_many(strategy: object) -> list[RunSpec]:
        drawn: list[RunSpec] = []

        @settings(max_examples=60, database=None, derandomize=True, deadline=None)
        @given(strategy)
        def collect(spec: RunSpec) -> None:
            drawn.append(spec)

        collect()
        return drawn

    with_census = chaos_specs(NAIVE, max_faults=2, steps=_fake_census)
    drawn = draw_many(with_census)
    assert sum(map(has_step, drawn)) >= len(drawn) // 5, "sink.step faults are a large share of the draws"
    assert not any(map(has_step, draw_many(chaos_specs(NAIVE, max_faults=2))))
    # Shrinking moves a step fault towards the first boundary and the first batch that has one.
    minimal = find(with_census, has_step, settings=settings(database=None, max_examples=200))
    (rule,) = [r for r in minimal.extra_faults if r.point == "sink.step"]
    assert (rule.batch, rule.step, rule.wrapper, rule.partition) == (0, 1, "write", 0)
    quiet = settings(database=None, max_examples=300)
    later = find(with_census, lambda s: any(r.wrapper == "commit" for r in s.extra_faults), settings=quiet)
    assert [(r.batch, r.step) for r in later.extra_faults if r.point == "sink.step"] == [(1, 2)]


def test_a_batch_commit_is_drawn_as_often_as_all_its_write_tasks_together() -> None:
    """Eight write() tasks and one commit() in every batch: the commit, where a sink publishes, gets about
    half of the step faults, not a ninth."""

    def census(
        seed: int, rows: object, batch_rows: int | None = None
    ) -> dict[int, list[tuple[str, int | None, tuple[int, ...]]]]:
        n = len(build_schedule(RunSpec(NAIVE.name, seed, kills=0, rows=rows), NAIVE).predicted_batches)  # type: ignore[arg-type]
        return {b: [("write", p, (1, 2, 3)) for p in range(8)] + [("commit", None, (1, 3, 5))] for b in range(n)}

    wrappers: list[str] = []

    @settings(max_examples=150, database=None, derandomize=True, deadline=None)
    @given(chaos_specs(NAIVE, max_faults=2, steps=census))
    def collect(spec: RunSpec) -> None:
        wrappers.extend(r.wrapper for r in spec.extra_faults if r.point == "sink.step" and r.wrapper)

    collect()
    assert len(wrappers) >= 30
    assert 0.3 <= wrappers.count("commit") / len(wrappers) <= 0.85, wrappers
