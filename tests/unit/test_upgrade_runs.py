"""Upgrade runs' pure parts: the deploy argument, where the schedule deploys, the chaos draw of the moment, which
side of the deploy an anomaly lies on, and the refusal verdict (issue 29 point 1)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import find
from hypothesis.errors import NoSuchExample

from fault_injectors.nemesis import NEMESES
from fault_injectors.plan import FaultRule
from harness.chaos.profiles import get_profile
from harness.chaos.result import CampaignResult, ExampleRecord
from harness.chaos.strategies import chaos_specs, deploy_moments
from harness.engine.deploy import Deployed, first_v2_batch, read_deployed, refusal
from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec, parse_deploy
from harness.verdict.checker import Anomaly, CheckResult
from harness.verdict.deploy_marks import V1_EXPECTED, mark_deploy, side
from scenarios import get_scenario

V2 = "scenarios.library.upgrade_filter:V2"
KEY_REFUSED = (
    "the streaming query failed loudly in driver-2: [STREAM_FAILED] Query [id = 1, runId = 2] terminated with "
    "exception: [STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE] Provided key schema does not match existing state key schema."
)


@pytest.mark.parametrize(
    ("text", "parsed"), [("after-round:2", ("after-round", 2)), ("after-fault:x1", ("after-fault", "x1"))]
)
def test_a_deploy_is_after_a_round_or_after_a_fault(text: str, parsed: tuple[str, object]) -> None:
    assert parse_deploy(text) == parsed


@pytest.mark.parametrize("text", ["after-round:0", "after-round:x", "after-fault:", "round:1", "now"])
def test_a_bad_deploy_says_the_two_forms(text: str) -> None:
    with pytest.raises(ValueError, match=r"after-round:K .* or after-fault:ID"):
        parse_deploy(text)


def test_a_deploy_needs_a_version_and_the_replay_names_both() -> None:
    with pytest.raises(ValueError, match="without upgrade_to"):
        RunSpec("upgrade_filter", 1, deploy="after-round:1")
    spec = RunSpec("upgrade_filter", 1, rounds=3, upgrade_to=V2, deploy="after-round:2")
    assert spec.replay_args()[-4:] == ["--upgrade-to", V2, "--deploy", "after-round:2"]
    assert RunSpec.from_dict(dataclasses.asdict(spec)) == spec


def test_a_graceful_deploy_goes_after_its_rounds_run() -> None:
    spec = RunSpec("upgrade_filter", 1, kills=0, rounds=3, upgrade_to=V2, deploy="after-round:2")
    kinds = [op.kind for op in build_schedule(spec, get_scenario("upgrade_filter")).ops]
    assert kinds == ["add_data", "run", "add_data", "run", "deploy", "add_data", "run", "heal", "run", "check"]


@pytest.mark.parametrize(
    ("deploy", "rules", "message"),
    [
        ("after-round:3", (), "goes after round 1..rounds-1"),
        ("after-fault:x9", (FaultRule("x1", "after_commit_logged", 1),), r"no fault rule 'x9'.*kills planned: x1"),
        ("after-fault:x1", (FaultRule("x1", "source.read", 1, action="raise"),), "needs the driver to die"),
    ],
)
def test_a_deploy_the_schedule_cannot_make_is_refused(deploy: str, rules: tuple[FaultRule, ...], message: str) -> None:
    spec = RunSpec("upgrade_filter", 1, kills=0, rounds=3, extra_faults=rules, upgrade_to=V2, deploy=deploy)
    with pytest.raises(ValueError, match=message):
        build_schedule(spec, get_scenario("upgrade_filter"))


def test_versions_that_read_different_inputs_or_a_nemesis_are_refused() -> None:
    other = RunSpec("upgrade_filter", 1, kills=0, upgrade_to="agg_watermark_append")
    with pytest.raises(ValueError, match="partitions and rows_per_offset must match"):
        build_schedule(other, get_scenario("upgrade_filter"))
    nemesis = RunSpec("upgrade_filter", 1, kills=0, upgrade_to=V2, nemesis=(next(iter(NEMESES)),))
    with pytest.raises(ValueError, match="takes no nemesis"):
        build_schedule(nemesis, get_scenario("upgrade_filter"))
    with pytest.raises(ValueError, match="unknown scenario 'nope'"):
        build_schedule(RunSpec("upgrade_filter", 1, kills=0, upgrade_to="nope"), get_scenario("upgrade_filter"))


def test_chaos_draws_a_deploy_and_shrinks_it_to_a_graceful_stop_after_round_one() -> None:
    kills = [FaultRule("h1", "after_commit_logged", 0), FaultRule("h2", "source.read", 1, action="raise")]
    assert find(deploy_moments(3, kills), lambda d: True) == "after-round:1"
    drawn = {find(deploy_moments(3, kills), lambda d, w=w: d == w) for w in ("after-round:2", "after-fault:h1")}
    assert drawn == {"after-round:2", "after-fault:h1"}
    with pytest.raises(NoSuchExample):
        find(deploy_moments(3, kills), lambda d: d == "after-fault:h2")  # a raise leaves the driver alive
    spec = find(chaos_specs(get_scenario("upgrade_filter")), lambda s: True)
    assert spec.upgrade_to == V2 and spec.deploy == "after-round:1" and spec.effective_rounds == 2


def test_an_anomaly_says_which_side_of_the_deploy_it_lies_on(tmp_path: Path) -> None:
    assert side(1, 3, "v2") == "before the deploy (version 1 committed batch 1)"
    assert side(3, 3, "v2") == "at the deploy: batch 3 is the first v2 ran"
    assert side(5, 3, "v2") == "after the deploy of v2 (batch 3 on)"
    pq.write_table(pa.table({"key": [1], "rows": [2]}), tmp_path / V1_EXPECTED)
    group = dict(kind="wrong-value", batch_id=None, partition=None, offset=None, seq=None, expected_count=1)
    emitted = Anomaly(**group, observed_count=0, row={"key": 1, "rows": 2})
    owed = Anomaly(**group, observed_count=0, row={"key": 2, "rows": 5})
    marked = mark_deploy(CheckResult(False, [emitted, owed]), tmp_path, 3, "v2", ("key",))
    assert [a.deploy for a in marked.anomalies] == [
        "a group version 1 emitted before the deploy",
        "a group version 2 owes: not emitted before the deploy of v2 (batch 3 on)",
    ]


def test_a_failure_before_the_new_version_commits_is_a_refusal_named_by_the_guide(tmp_path: Path) -> None:
    (tmp_path / "commits").mkdir()
    for n in (0, 1):
        (tmp_path / "commits" / str(n)).write_text("v1\n{}\n")
    deployed = Deployed(V2, "upgrade_filter", first_v2_batch(tmp_path), "graceful stop after round 1")
    deployed.save(tmp_path / "deployed.json")
    assert read_deployed(tmp_path / "deployed.json") == deployed and deployed.first_batch == 2
    found = refusal(KEY_REFUSED, deployed, tmp_path)
    assert found is not None and found.error_class == "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"
    assert found.rule is not None and found.rule.id == "stateful-schema"
    assert found.message.startswith("[STREAM_FAILED]")
    assert "is not allowed" in found.describe()
    (tmp_path / "commits" / "2").write_text("v1\n{}\n")  # version 2 committed a batch: a later loud failure
    assert refusal(KEY_REFUSED, deployed, tmp_path) is None
    assert read_deployed(tmp_path / "none.json") is None


def test_a_refused_campaign_has_its_own_verdict_and_exit_code() -> None:
    spec = RunSpec("upgrade_agg_key", 1, kills=0, upgrade_to="scenarios.library.upgrade_agg_key:V2")
    result = CampaignResult("upgrade_agg_key", "upgrade-refused", 1, get_profile("ci"))
    result.failure = ExampleRecord(1, spec, "upgrade-refused", {}, [], 1.0, "upgrade-refused ...")
    assert (result.verdict, result.exit_code) == ("upgrade-refused", 3)
    assert result.render().startswith("upgrade refused by Spark, shrunk to the simplest deploy")
    with pytest.raises(AssertionError):
        result.assert_exactly_once()


def test_only_a_restart_with_no_fault_after_the_deploy_is_a_refusal(tmp_path: Path) -> None:
    (tmp_path / "commits").mkdir()
    deployed = Deployed(V2, "upgrade_filter", 0, "graceful stop after round 1")
    assert refusal(KEY_REFUSED, deployed, tmp_path) is not None
    assert refusal(KEY_REFUSED, deployed, tmp_path, faults_after=1) is None  # a kill after the deploy came first
    bare = 'terminated with exception: For input string: "{"0": 28, "1": 56}" SQLSTATE: XXKST'
    found = refusal(bare, deployed, tmp_path)  # no guide row names it: said so
    assert found is not None and found.rule is None and "no row of the guide names this error" in found.describe()


def test_a_chaos_spec_replays_its_deploy_by_the_run_commands_rule_names() -> None:
    rules = (FaultRule("h1", "after_commit_logged", 0), FaultRule("h2", "after_offsets_logged", 2))
    spec = RunSpec(
        "upgrade_filter", 5, kills=0, rows=((3, 4), (5, 6), (1, 1)), extra_faults=rules, upgrade_to=V2,
        deploy="after-fault:h2",
    )  # fmt: skip
    args = spec.replay_args()
    assert args[args.index("--deploy") + 1] == "after-fault:x2" and args[args.index("--rounds") + 1] == "3"
    from harness.cli.main import build_parser

    parsed = build_parser().parse_args(args)
    assert parsed.deploy == "after-fault:x2" and [r.point for r in parsed.kill] == [
        "after_commit_logged",
        "after_offsets_logged",
    ]


def test_no_deploy_after_the_sink_may_hold_a_batch_without_its_commit() -> None:
    rules = (FaultRule("x1", "sink.commit.after", 1),)
    spec = RunSpec("upgrade_filter", 1, kills=0, rounds=3, extra_faults=rules, upgrade_to=V2, deploy="after-fault:x1")
    with pytest.raises(ValueError, match=r"sink\.commit\.after, after which the sink may hold the batch"):
        build_schedule(spec, get_scenario("upgrade_filter"))
