"""DStream scenarios' pure parts: batch times, scenario checks, the verdict's batches and names (no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fault_injectors.dstream import batch_time_for
from fault_injectors.plan import FaultRule
from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec, parse_kill_argument
from harness.verdict.check import check_run_dir
from harness.verdict.dstream_marks import DSTREAM_BATCHES, batch_time_text, dstream_spans
from scenarios import all_scenarios, get_scenario
from scenarios.dstream import DStreamScenario, dstream_scenario

pytestmark = pytest.mark.unit

FILES = [
    {"batch": 0, "time_ms": 1_000_000, "files": ["p0000-000000000000-000000000004.json"], "done": True},
    {
        "batch": 1,
        "time_ms": 1_005_000,
        "files": ["p0000-000000000004-000000000006.json", "p0001-000000000000-000000000003.json"],
        "done": True,
    },
]


def test_a_rounds_files_get_one_batch_time_on_the_timers_grid_after_the_margin() -> None:
    assert batch_time_for(10_100, 1000, 400) == 11_000
    assert batch_time_for(10_700, 1000, 400) == 12_000  # 11_000 is too close: renames could straddle it
    assert batch_time_for(10_000, 2000, 0) == 10_000
    assert all(
        batch_time_for(n, 1000, 400) % 1000 == 0 and batch_time_for(n, 1000, 400) >= n + 400 for n in range(0, 5000, 7)
    )


def test_dstream_spans_follow_the_files_and_partitions_without_a_file_stay_put() -> None:
    spans = dstream_spans(FILES)
    assert [(s.batch_id, dict(s.start), dict(s.end)) for s in spans] == [
        (0, {0: 0}, {0: 4}),
        (1, {0: 4, 1: 0}, {0: 6, 1: 3}),
    ]
    assert batch_time_text(1_005_000) == "1970-01-01 00:16:45.000 UTC"


def _rows(keys: list[tuple[int, int]]) -> pa.Table:
    return pa.table({"partition": [p for p, _ in keys], "offset": [o for _, o in keys], "seq": [0] * len(keys)})


def test_the_verdict_names_a_duplicates_batch_time_and_input_file(tmp_path: Path) -> None:
    oracle, checkpoint = tmp_path / "oracle", tmp_path / "checkpoint"
    oracle.mkdir()
    checkpoint.mkdir()  # a DStream checkpoint has no offset log: the rounds' files are the batches
    (checkpoint / "checkpoint-1000000").write_bytes(b"")
    expected = [(0, o) for o in range(6)] + [(1, o) for o in range(3)]
    pq.write_table(_rows(expected), oracle / "expected.parquet")
    pq.write_table(_rows([*expected, (1, 2), (0, 5)]), oracle / "observed.parquet")
    (oracle / DSTREAM_BATCHES).write_text(json.dumps({"batches": FILES, "stray": []}))
    fault = {"history_index": 7, "batch": 1, "point": "dstream.batch.end", "description": "k1: kill at end"}
    result = check_run_dir(oracle, checkpoint, [fault])
    assert result.valid is False and result.counts() == {"duplicate": 2}
    where = {(a.partition, a.offset): (a.batch_id, a.sink_where, a.fault) for a in result.anomalies}
    assert where[(1, 2)][0] == 1 and where[(0, 5)][0] == 1
    assert (
        where[(1, 2)][1]
        == "batch time 1970-01-01 00:16:45.000 UTC (1005000), file p0001-000000000000-000000000003.json"
    )
    assert where[(0, 5)][1] is not None and where[(0, 5)][1].endswith("file p0000-000000000004-000000000006.json")
    assert where[(1, 2)][2] is not None and where[(1, 2)][2].history_index == 7


def _setup(sc: object, ctx: object) -> object:
    raise AssertionError("not called")


def test_a_dstream_scenario_refuses_what_it_cannot_run() -> None:
    base = get_scenario("dstream_foreach")
    kwargs = {"name": "x", "summary": "s", "guarantee": "exactly-once", "transform": base.transform}
    with pytest.raises(ValueError, match="not a DStream application's"):
        dstream_scenario(**kwargs, setup=_setup, read_output=base.read_output, kill_points=("after_offsets_logged",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="whole number of seconds"):
        dstream_scenario(**kwargs, setup=_setup, read_output=base.read_output, batch_seconds=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs its setup function"):
        DStreamScenario("x", "s", "exactly-once", (), base.transform, base.attach_sink, base.read_output)
    with pytest.raises(TypeError, match="no DataStreamWriter"):
        base.attach_sink(None, None)  # type: ignore[arg-type]


def test_library_dstream_scenarios_run_under_rounds_only_and_their_points_parse() -> None:
    dstreams = [s for s in all_scenarios().values() if isinstance(s, DStreamScenario)]
    assert {s.name for s in dstreams} >= {"dstream_foreach", "dstream_foreach_naive", "dstream_state"}
    spec = RunSpec("dstream_foreach", 1, 3)
    schedule = build_schedule(spec, get_scenario("dstream_foreach"))
    assert {r.point for r in schedule.plan.rules} <= {"dstream.batch.start", "dstream.batch.end"}
    assert len(schedule.predicted_batches) == 3  # one batch a round
    with pytest.raises(ValueError, match="batch interval"):
        build_schedule(RunSpec("dstream_foreach", 1, 1, trigger="available-now"), get_scenario("dstream_foreach"))
    with pytest.raises(ValueError, match="Spark Connect has none"):
        build_schedule(RunSpec("dstream_foreach", 1, 1, master="connect:local[2]"), get_scenario("dstream_foreach"))
    with pytest.raises(ValueError, match="runs no new code"):
        build_schedule(
            RunSpec("dstream_foreach", 1, 0, rounds=2, upgrade_to="dstream_migrated"), get_scenario("dstream_foreach")
        )
    rule = parse_kill_argument("dstream.batch.end:1")
    assert (rule.point, rule.batch) == ("dstream.batch.end", 1)
    step = FaultRule("s", "sink.step", 0, step=2, wrapper="foreach_rdd")
    assert "in foreach_rdd" in step.describe()
