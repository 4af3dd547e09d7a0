"""Upgrade runs (issue 29 point 1): the next version of a pipeline deployed over a live checkpoint and sink, at a
graceful stop or right after a SIGKILL, with faults on both sides, judged batch by batch by the version that
committed it.

Default suite: the filter change deployed after a kill (the replayed batch runs the new code) and the refused
aggregation key (a broken deploy caught is upgrade-check's, test_upgrade_check.py). Heavy: the join condition
the guide calls ill-defined (measured: pairs lost across the deploy), the aggregate function Spark accepts and
that is silently wrong, a 3-example chaos campaign over the filter change and the 10-example campaign of the
acceptance."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from harness.engine.deploy import read_deployed
from harness.engine.pool import DriverPool
from harness.engine.report import render_text, to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument

FILTER = "upgrade_filter"


def play(pool: DriverPool, run_dir: Path, scenario: str, *kills: str, **spec: Any) -> tuple[dict[str, Any], str]:
    from scenarios import get_scenario

    log: list[str] = []
    faults = tuple(dataclasses.replace(parse_kill_argument(k), id=f"x{i + 1}") for i, k in enumerate(kills))
    upgrade = spec.pop("upgrade_to", get_scenario(scenario).upgrade_to)
    run = RunSpec(scenario, spec.pop("seed", 11), kills=0, extra_faults=faults, upgrade_to=upgrade, **spec)
    outcome = run_spec(run, run_dir=run_dir, echo=log.append, pool=pool)
    return to_json(outcome), render_text(outcome) + "\n" + "\n".join(log[-30:])


def test_a_filter_change_deployed_after_a_kill_replays_the_killed_batch_with_the_new_code(
    pool: DriverPool, tmp_path: Path
) -> None:
    doc, text = play(
        pool, tmp_path / "run", FILTER, "after_offsets_logged:2", "after_commit_logged:4", rounds=3,
        deploy="after-fault:x1",
    )  # fmt: skip
    assert doc["verdict"] == "exactly-once", text
    deployed = read_deployed(tmp_path / "run" / "deployed.json")
    assert deployed is not None and deployed.first_batch == 2, text  # batch 2 was planned by v1, never committed
    assert [k["point"] for k in doc["kills_fired"]] == ["after_offsets_logged", "deploy", "after_commit_logged"]
    # The sink shows each version's filter on its own batches: the deploy really changed the code that ran.
    rows = pq.read_table(tmp_path / "run" / "output").to_pylist()
    spans = {b["batch_id"]: b for b in doc["batches"]}
    before = {int(p): e for p, e in spans[deployed.first_batch - 1]["end"].items()}
    v1 = [r for r in rows if r["offset"] < before[r["partition"]]]
    v2 = [r for r in rows if r["offset"] >= before[r["partition"]]]
    assert v1 and v2, text
    assert all(r["value"] % 7 != 0 for r in v1) and any(r["value"] % 5 == 0 for r in v1)
    assert all(r["value"] % 5 != 0 for r in v2) and any(r["value"] % 7 == 0 for r in v2)
    assert "across a deploy of scenarios.library.upgrade_filter:V2" in text


def test_a_changed_aggregation_key_is_refused_by_spark_with_its_error_class(pool: DriverPool, tmp_path: Path) -> None:
    doc, text = play(pool, tmp_path / "run", "upgrade_agg_key", "after_commit_logged:1", rounds=3)
    assert doc["verdict"] == "upgrade-refused", text
    refused = doc["upgrade_refused"]
    assert refused["error_class"] == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE", text
    assert refused["rule"] is not None and refused["rule"]["category"] == "not allowed", text
    assert text.splitlines()[0].startswith("upgrade-refused (scenario=upgrade_agg_key"), text


@pytest.mark.heavy  # certify --upgrades measures this too
def test_a_changed_aggregate_function_is_accepted_by_spark_and_caught_at_the_deploy(
    pool: DriverPool, tmp_path: Path
) -> None:
    doc, text = play(pool, tmp_path / "run", "upgrade_agg_function", "after_commit_logged:5", rounds=3, seed=3)
    assert doc["verdict"] == "violated", text
    wrong = [a for a in doc["anomalies"] if a["kind"] == "wrong-value"]
    assert wrong and all(a["deploy"] and "version 2 owes" in a["deploy"] for a in wrong), text
    # max() resumed on version 1's partial sums: the sink holds more than the largest value of the window.
    assert all(a["observed_row"]["value_sum"] > a["row"]["value_sum"] for a in wrong), text
    # The same run without the deploy is exactly-once: the anomalies are the upgrade's.
    alone, alone_text = play(
        pool, tmp_path / "alone", "upgrade_agg_function", "after_commit_logged:5", rounds=3, seed=3, upgrade_to=None
    )
    assert alone["verdict"] == "exactly-once", alone_text


@pytest.mark.heavy  # CI time (~50 s): the default suite's deploys are the filter change and the refused key
def test_a_join_condition_the_guide_calls_ill_defined_loses_pairs_across_the_deploy(
    pool: DriverPool, tmp_path: Path
) -> None:
    doc, text = play(pool, tmp_path / "run", "upgrade_join_condition", "after_commit_logged:5", rounds=3, seed=4)
    assert doc["verdict"] == "violated", text
    lost = [a for a in doc["anomalies"] if a["kind"] == "lost"]
    assert lost and {a["kind"] for a in doc["anomalies"]} == {"lost"}, text
    assert all("version 2 owes" in a["deploy"] for a in lost), text
    # Each lost pair has one row on each side of the deploy: version 1 had evicted the older one.
    deployed = read_deployed(tmp_path / "run" / "deployed.json")
    assert deployed is not None and deployed.first_batch > 0, text
    last_v1 = next(b for b in doc["batches"] if b["batch_id"] == deployed.first_batch - 1)
    before = {int(p): e for p, e in last_v1["end"].items()}
    assert all((a["row"]["l_offset"] < before[0]) != (a["row"]["r_offset"] < before[1]) for a in lost), text
    # Version 2 alone, with the same data and kill, is exactly-once.
    alone, alone_text = play(
        pool, tmp_path / "alone", "scenarios.library.upgrade_join_condition:V2", "after_commit_logged:5", rounds=3,
        seed=4,
    )  # fmt: skip
    assert alone["verdict"] == "exactly-once", alone_text


@pytest.mark.heavy  # CI time (~45 s): the filter change deployed after a kill above is the default's case
@pytest.mark.chaos(scenario=FILTER, examples=3, profile="ci", seed=29)
def test_chaos_draws_deploys_of_the_filter_change_and_it_holds(chaos_run: Any) -> None:
    result = chaos_run()
    result.assert_exactly_once()
    assert all(e.spec.upgrade_to and e.spec.deploy for e in result.examples)


@pytest.mark.heavy
@pytest.mark.chaos(scenario=FILTER, examples=10, profile="ci", seed=2029)
def test_ten_chaos_examples_of_the_filter_change_hold(chaos_run: Any) -> None:
    result = chaos_run()
    result.assert_exactly_once()
    assert len(result.examples) == 10 and all(e.spec.deploy for e in result.examples)
