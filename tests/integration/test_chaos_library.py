"""Chaos campaigns over the whole scenario library with the CI profile, and the
at-least-once sink found, shrunk and replayed from its bundle."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pyspark
import pytest

from harness.chaos.bundle import anomaly_keys, load_bundle
from harness.chaos.campaign import run_campaign
from harness.chaos.profiles import get_profile
from harness.engine.pool import DriverPool
from harness.engine.report import to_json
from harness.engine.runner import run_spec
from scenarios import all_scenarios

#: No shrinking here: these campaigns check verdicts across the library; finding, shrinking and replaying a
#: violation is test_xdist_suite.py's naive append, a bundle's replay test_pytest_failure_report.py's (and, opt-in,
#: the heavy test below and test_contextless_chaos.py's broken source).
#: Two examples per exactly-once scenario in the default suite (its time budget: the 5 of DEFAULT_TIER), one
#: per at-least-once scenario; ``HARNESS_HEAVY=1`` runs the ``ci`` profile's own count, 3 (1 for at-least-once).
CI = dataclasses.replace(
    get_profile("ci"),
    shrink_budget_s=0,
    examples=get_profile("ci").examples if os.environ.get("HARNESS_HEAVY") == "1" else 2,
)
#: Variants run with one example here: tws_sessions_ttl is tws_sessions's processor in processing-time mode with a
#: TTL (its campaign puts the TTL bookkeeping under drawn faults; tws_sessions's has the two).
ONE_EXAMPLE = {"tws_sessions_ttl"}
#: Broken twins whose campaigns run in their own test files (found, shrunk and replayed there), not here.
#: test_tws_sessions.py; the upgrade pairs: test_upgrade_runs.py (one of them is refused: no exactly-once verdict).
ELSEWHERE = {
    "tws_sessions_side_store",
    "upgrade_filter",
    "upgrade_agg_key",
    "upgrade_agg_function",
    "upgrade_join_condition",
}
#: The default suite's representatives (a stateful exactly-once pipeline, a sink of Python code drawing
#: ``sink.step`` faults, two at-least-once sinks, a transformWithState variant); the rest of the library is the
#: ``heavy`` tier (bin/test-heavy): each of those scenarios has its own kill tests in the default suite
#: (test_sources.py, test_reference_sinks.py, test_stateful_scenarios.py, test_tws_sessions.py, test_kafka_*.py;
#: ``file_sink_stateless``'s campaign runs in test_xdist_suite.py, under pytest-xdist on the newest release).
DEFAULT_TIER = {
    "agg_watermark_append",
    "python_sink_transactional",
    "foreachbatch_append_naive",
    "python_sink_publish_in_write",
    "tws_sessions_ttl",
}
SCENARIOS = [
    pytest.param(name, marks=() if name in DEFAULT_TIER else pytest.mark.heavy)
    for name in sorted(set(all_scenarios()) - ELSEWHERE)
]
#: The scenarios whose campaigns here also draw ``sink.step`` faults (a correct foreachBatch sink and a correct
#: DataSourceStreamWriter). The other sink scenarios run without, to keep the suite's time: each census is one
#: fault-free run per distinct data; a campaign that finds a step fault is test_crash_anywhere.py's (heavy tier).
STEP_REPRESENTATIVES = {"foreachbatch_sqlite_upsert", "python_sink_transactional"}


@pytest.mark.parametrize("name", SCENARIOS)
def test_ci_profile_campaign(name: str, pool: DriverPool, tmp_path: Path) -> None:
    scenario = all_scenarios()[name]
    steps = None if name in STEP_REPRESENTATIVES else False
    # A sink known to be at-least-once may show either verdict here: one example checks its campaign runs clean
    # (its violations are caught, named and located by test_runner_kills.py, test_reference_sinks.py,
    # test_stateful_scenarios.py and test_crash_anywhere.py).
    one = scenario.guarantee != "exactly-once" or name in ONE_EXAMPLE
    profile = dataclasses.replace(CI, examples=1) if one else CI
    result = run_campaign(name, seed_value=1, profile=profile, work_dir=tmp_path, pool=pool, steps=steps)
    if result.error and "unavailable here" in result.error:
        pytest.skip(result.error.splitlines()[0])
    assert result.error is None, result.error
    assert len(result.examples) >= 1
    if name in STEP_REPRESENTATIVES:
        assert scenario.draws_sink_steps and result.census_runs >= 1, "the campaign should have drawn sink.step faults"
    if scenario.guarantee == "exactly-once":
        assert result.verdict == "exactly-once", result.failure.summary if result.failure else ""
    else:
        assert result.verdict in ("exactly-once", "violated")


@pytest.mark.heavy  # the default suite's representatives: test_xdist_suite.py, test_pytest_failure_report.py
def test_at_least_once_sink_is_found_shrunk_and_replayed(pool: DriverPool, tmp_path: Path) -> None:
    profile = dataclasses.replace(get_profile("ci"), examples=10, shrink_budget_s=90)
    result = run_campaign("foreachbatch_append_naive", seed_value=1, profile=profile, work_dir=tmp_path, pool=pool)
    assert result.verdict == "violated", [e.summary for e in result.examples]
    assert result.failure is not None and result.bundle is not None
    assert 1 <= len(result.failure.spec.extra_faults) + len(result.failure.spec.nemesis) <= 3
    spec, recorded = load_bundle(result.bundle)
    assert recorded["versions"]["pyspark"] == pyspark.__version__  # the pinned version, whichever it is
    assert recorded["anomalies"] and {a["kind"] for a in recorded["anomalies"]} == {"duplicate"}
    replay = to_json(run_spec(spec, run_dir=tmp_path / "replay", echo=lambda m: None))
    assert (replay["verdict"], anomaly_keys(replay["anomalies"])) == (
        recorded["verdict"],
        anomaly_keys(recorded["anomalies"]),
    )
