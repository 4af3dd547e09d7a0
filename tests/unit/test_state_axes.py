"""State-store axes (issue 13 point 3): a run's provider, checkpoint format version and shuffle partitions, as
confs on the query, drawn by chaos for stateful scenarios only, and restored for the next run of a driver."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.chaos.strategies import chaos_specs, describe_spec
from harness.engine.spec import RunSpec
from harness.spark.session import apply_run_confs
from scenarios import all_scenarios, get_scenario

AGG = get_scenario("agg_watermark_append")
STATELESS = get_scenario("file_sink_stateless")
PROVIDER = "spark.sql.streaming.stateStore.providerClass"


def test_the_axes_become_the_query_confs_and_replay() -> None:
    spec = RunSpec(AGG.name, 3, state_store="rocksdb-changelog", checkpoint_format=2, shuffle_partitions=3)
    confs = spec.state_confs()
    assert confs[PROVIDER].endswith("RocksDBStateStoreProvider")
    assert confs["spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"] == "true"
    assert confs["spark.sql.streaming.stateStore.checkpointFormatVersion"] == "2"
    assert confs["spark.sql.shuffle.partitions"] == "3"
    assert spec.axes() == "rocksdb-changelog/v2/3p" and RunSpec(AGG.name, 1).axes() == "hdfs/v1/2p"
    assert RunSpec(AGG.name, 1).state_confs() == {}
    assert spec.replay_command().endswith(
        "--state-store rocksdb-changelog --checkpoint-format 2 --shuffle-partitions 3"
    )
    assert RunSpec.from_dict(json.loads(spec.to_json())) == spec


def test_combinations_spark_refuses_are_refused_before_spark_starts() -> None:
    with pytest.raises(ValueError, match="checkpoint format 2 is not supported by the hdfs state store"):
        RunSpec(AGG.name, 1, checkpoint_format=2)
    with pytest.raises(ValueError, match="state store 'lsm' is not one of hdfs, rocksdb, rocksdb-changelog"):
        RunSpec(AGG.name, 1, state_store="lsm")
    with pytest.raises(ValueError, match="shuffle_partitions must be >= 1"):
        RunSpec(AGG.name, 1, shuffle_partitions=0)


def test_a_store_the_scenario_cannot_run_on_is_refused_before_spark_starts() -> None:
    from harness.engine.schedule import build_schedule

    tws = all_scenarios()["tws_sessions"]
    with pytest.raises(ValueError, match=r"runs on the rocksdb or rocksdb-changelog state store only \(got hdfs\)"):
        build_schedule(RunSpec(tws.name, 1, state_store="hdfs"), tws)
    assert build_schedule(RunSpec(tws.name, 1, state_store="rocksdb-changelog"), tws).predicted_batches
    assert build_schedule(RunSpec(tws.name, 1), tws).predicted_batches  # the scenario's own default (RocksDB)
    assert build_schedule(RunSpec(AGG.name, 1, state_store="hdfs"), AGG).predicted_batches
    typo = dataclasses.replace(tws, state_stores=("rocksdb", "rockdb"))
    with pytest.raises(ValueError, match=r"state_stores \['rockdb'\] are not among hdfs, rocksdb, rocksdb-changelog"):
        build_schedule(RunSpec(tws.name, 1), typo)


def test_the_stateful_scenarios_are_marked() -> None:
    marked = sorted(n for n, sc in all_scenarios().items() if sc.stateful)
    assert marked == [
        "agg_watermark_append",
        "agg_watermark_update",
        "dedup_stream",
        "dedup_within_watermark",
        "delta_sink_complete",
        "file_source_agg",
        "pandas_state_first_seen",
        "stream_stream_join",
        "tws_sessions",
        "tws_sessions_side_store",
        "tws_sessions_ttl",
        "upgrade_agg_function",
        "upgrade_agg_key",
        "upgrade_join_condition",
    ]


def _collect(strategy: st.SearchStrategy[RunSpec], n: int) -> list[RunSpec]:
    seen: list[RunSpec] = []

    @settings(max_examples=n, deadline=None, database=None, derandomize=True)
    @given(strategy)
    def collect(spec: RunSpec) -> None:
        seen.append(spec)

    collect()
    return seen


def test_chaos_draws_every_axis_value_for_stateful_scenarios_only() -> None:
    specs = _collect(chaos_specs(AGG, max_rounds=1, max_faults=1), 80)
    assert {s.axes().split("/")[0] for s in specs} == {"hdfs", "rocksdb", "rocksdb-changelog"}
    assert {s.axes().split("/")[1] for s in specs} == {"v1", "v2"}
    assert {s.axes().split("/")[2] for s in specs} == {"1p", "2p", "3p"}
    assert any("; state rocksdb" in describe_spec(s) for s in specs)
    tws = _collect(chaos_specs(all_scenarios()["tws_sessions"], max_rounds=1, max_faults=1), 40)
    assert {s.state_store for s in tws} == {"rocksdb", "rocksdb-changelog"}, "transformWithState needs RocksDB"
    assert {s.axes().split("/")[1] for s in tws} == {"v1", "v2"}
    plain = _collect(chaos_specs(STATELESS, max_rounds=1, max_faults=1), 30)
    assert all(s.state_store is s.checkpoint_format is s.shuffle_partitions is None for s in plain)


class FakeConf:
    """``spark.conf`` of a session built with ``spark.sql.shuffle.partitions=2``."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {"spark.sql.shuffle.partitions": "2"}

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


def test_a_pooled_driver_gets_the_sessions_values_back_for_the_next_run() -> None:
    spark: Any = type("Spark", (), {"conf": FakeConf()})()
    apply_run_confs(spark, RunSpec(AGG.name, 1, state_store="rocksdb", shuffle_partitions=3).state_confs())
    assert spark.conf.values["spark.sql.shuffle.partitions"] == "3" and PROVIDER in spark.conf.values
    apply_run_confs(spark, {})
    assert spark.conf.values == {"spark.sql.shuffle.partitions": "2"}  # restored, not unset to Spark's 200
