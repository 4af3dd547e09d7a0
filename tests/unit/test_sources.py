"""A scenario's source (Spark-free): user rows, published files, file-source batch spans, and which
crash points a scenario may plan with each kind of source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from pyspark.sql.types import (
    ArrayType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from examples.pipelines import orders
from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec
from harness.verdict.check import batch_spans
from scenarios import ConfigError, FileDirectory, Replayable, Rows, Scenario, SourceConfig
from scenarios.admission import plan_batches
from scenarios.base import parquet_file_sink, read_parquet_output
from scenarios.filedir import file_name, parse_name, publish, published_ends
from scenarios.tap import advance, init_tap
from scenarios.userrows import as_record, as_tuple, function_ref, source_rows, top_level_names
from tests.admission import needs_read_limits

CUSTOMER = StructType([StructField("id", IntegerType()), StructField("country", StringType())])
ORDERS = StructType(
    [
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("seq", IntegerType()),
        StructField("order_id", StringType()),
        StructField("customer", CUSTOMER),
        StructField("amount_cents", LongType()),
        StructField("status", StringType()),
        StructField("ts", TimestampType()),
    ]
)


def test_top_level_names_skip_nested_fields() -> None:
    assert top_level_names(orders.SCHEMA) == ["order_id", "customer", "amount_cents", "status", "ts"]
    assert top_level_names("a MAP<STRING, ARRAY<INT>>, `b` DECIMAL(10, 2)") == ["a", "b"]


def test_rows_refuse_provenance_names_and_unimportable_functions() -> None:
    with pytest.raises(ConfigError, match=r"clash with the provenance columns"):
        Rows("offset BIGINT, x INT", orders.order)
    with pytest.raises(ConfigError, match="define it at module level"):
        Rows("x INT", lambda s, p, o, q: (1,))
    with pytest.raises(ConfigError, match="must name a function"):
        Rows("x INT", "no_colon")
    assert Rows("x INT", orders.order).fn == "examples.pipelines.orders:order"
    assert function_ref("m:f", "x") == "m:f"


def test_dicts_and_tuples_convert_to_the_schema_order_nested_too() -> None:
    user = StructType(ORDERS.fields[3:])
    event = orders.order(3, 1, 5, 0)
    as_t = as_tuple(event, user)
    assert as_t[1] == (event["customer"]["id"], event["customer"]["country"])
    assert as_tuple(list(as_t), user) == as_t
    record = as_record(as_t, user)
    assert record["customer"] == event["customer"]
    arrays = StructType([StructField("xs", ArrayType(CUSTOMER))])
    assert as_tuple({"xs": [{"country": "DE", "id": 1}]}, arrays) == ([(1, "DE")],)
    with pytest.raises(ConfigError, match=r"key\(s\) \['nope'\]"):
        as_tuple({"nope": 1}, user, "row at offset 5")
    with pytest.raises(ConfigError, match=r"2 value\(s\) for the 5 column"):
        as_tuple((1, 2), user)


def test_source_rows_are_pure_and_carry_provenance_first() -> None:
    cfg = SourceConfig(seed=4, partitions=2, rows_per_offset=2)
    rows = list(source_rows(cfg, orders.ROWS, ORDERS, 1, 3, 5))
    assert [r[:3] for r in rows] == [(1, 3, 0), (1, 3, 1), (1, 4, 0), (1, 4, 1)]
    assert rows == list(source_rows(cfg, orders.ROWS, ORDERS, 1, 3, 5))
    assert list(source_rows(cfg, None, ORDERS, 0, 0, 2)) == list(cfg.rows(0, 0, 2))


def test_file_names_round_trip() -> None:
    name = file_name(3, 10, 25, "json")
    assert parse_name(name) == (3, 10, 25)
    assert parse_name(f"file:///tmp/x/input/{name}") == (3, 10, 25)
    assert parse_name(".p0003-000000000010-000000000025.json.1.tmp") is None


@pytest.mark.parametrize("fmt", ["json", "parquet"])
def test_publish_writes_each_range_once_and_only_what_is_missing(tmp_path: Path, fmt: str) -> None:
    tap, out = tmp_path / "tap.json", tmp_path / "input"
    cfg = SourceConfig(seed=9, partitions=2)
    init_tap(tap, 2)
    advance(tap, {0: 3, 1: 0})
    assert publish(out, tap, fmt, cfg, orders.ROWS, ORDERS) == [file_name(0, 0, 3, fmt)]
    advance(tap, {0: 2, 1: 4})
    assert publish(out, tap, fmt, cfg, orders.ROWS, ORDERS) == [file_name(0, 3, 5, fmt), file_name(1, 0, 4, fmt)]
    assert publish(out, tap, fmt, cfg, orders.ROWS, ORDERS) == []  # a driver restarted mid-way adds nothing
    assert published_ends(out) == {0: 5, 1: 4}
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [file_name(0, 0, 3, fmt), file_name(0, 3, 5, fmt), file_name(1, 0, 4, fmt)]
    )
    first = out / file_name(1, 0, 4, fmt)
    if fmt == "json":
        records = [json.loads(line) for line in first.read_text().splitlines()]
    else:
        records = pq.read_table(first).to_pylist()
    assert [(r["partition"], r["offset"]) for r in records] == [(1, 0), (1, 1), (1, 2), (1, 3)]
    event = orders.order(9, 1, 2, 0)
    assert records[2]["customer"] == event["customer"] and records[2]["order_id"] == event["order_id"]


def test_csv_refuses_nested_columns(tmp_path: Path) -> None:
    tap = tmp_path / "tap.json"
    init_tap(tap, 1)
    advance(tap, {0: 1})
    with pytest.raises(ConfigError, match=r"\['customer'\] are nested.*use json or parquet"):
        publish(tmp_path / "in", tap, "csv", SourceConfig(partitions=1), orders.ROWS, ORDERS)


def _file_source_checkpoint(root: Path, batches: list[tuple[int, list[str]]], committed: int) -> Path:
    """Query batch i logs ``{"logOffset": batches[i][0]}``; a batch with files adds file-source log entry
    number ``logOffset`` listing them (a batch without new files repeats the previous ``logOffset``)."""
    ckpt = root / "ckpt"
    for d in ("offsets", "commits", "sources/0"):
        (ckpt / d).mkdir(parents=True)
    (ckpt / "metadata").write_text('{"id":"q"}')
    for bid, (log_offset, files) in enumerate(batches):
        meta = {"batchWatermarkMs": 0, "batchTimestampMs": 0, "conf": {}}
        offsets = f"v1\n{json.dumps(meta)}\n{json.dumps({'logOffset': log_offset})}"
        (ckpt / "offsets" / str(bid)).write_text(offsets)
        if files:
            entries = [
                json.dumps({"path": f"file://{root}/input/{f}", "timestamp": 1, "batchId": log_offset}) for f in files
            ]
            (ckpt / "sources" / "0" / str(log_offset)).write_text("v1\n" + "\n".join(entries))
        if bid < committed:
            (ckpt / "commits" / str(bid)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    return ckpt


def test_file_source_batches_are_located_by_the_files_their_log_lists(tmp_path: Path) -> None:
    ckpt = _file_source_checkpoint(
        tmp_path,
        [
            (0, [file_name(0, 0, 4, "json"), file_name(1, 0, 2, "json")]),
            (0, []),  # a batch without new files (a no-data batch): the file source's log does not move
            (1, [file_name(0, 4, 9, "json"), "other.json"]),
        ],
        committed=2,
    )
    spans = batch_spans(ckpt)
    assert [(s.batch_id, dict(s.start), dict(s.end), s.committed) for s in spans] == [
        (0, {0: 0, 1: 0}, {0: 4, 1: 2}, True),
        (2, {0: 4}, {0: 9}, False),
    ]


def _scenario(**kw: Any) -> Scenario:
    base: dict[str, Any] = {
        "name": "t",
        "summary": "t",
        "guarantee": "exactly-once",
        "kill_points": ("after_offsets_logged",),
        "transform": lambda df: df,
        "attach_sink": parquet_file_sink,
        "read_output": read_parquet_output,
    }
    return Scenario(**{**base, **kw})


def test_a_scenario_refuses_kill_points_its_source_cannot_reach() -> None:
    with pytest.raises(ValueError, match=r"\['source.read'\] cannot fire with Spark's json file source"):
        _scenario(kill_points=("after_offsets_logged", "source.read"), source=FileDirectory("json"))
    with pytest.raises(ValueError, match=r"sink.write.\* need a crash_injecting sink wrapper"):
        _scenario(kill_points=("sink.write.mid",), source=FileDirectory("json"))
    assert _scenario(kill_points=("sink.write.mid",), source=FileDirectory("json"), source_write_points=False)
    assert _scenario(kill_points=("source.read", "sink.write.mid"), source=Replayable())
    with pytest.raises(ConfigError, match="format 'avro'"):
        FileDirectory("avro")


@needs_read_limits
def test_a_file_source_run_is_one_batch_per_round_in_the_schedule() -> None:
    sc = orders.SCENARIO
    assert sc.batch_limit is None
    schedule = build_schedule(RunSpec(sc.name, 3, kills=2, rounds=3), sc)
    assert len(schedule.predicted_batches) == 3
    replayable = orders.REPLAYABLE_SCENARIO
    rows = ((30, 30), (30, 30))
    predicted = build_schedule(RunSpec(replayable.name, 3, kills=0, rows=rows), replayable).predicted_batches
    assert list(predicted) == plan_batches({0: 0, 1: 0}, {0: 30, 1: 30}, 40) + plan_batches(
        {0: 30, 1: 30}, {0: 60, 1: 60}, 40
    )


def test_the_documented_orders_example_is_the_code_the_suite_runs() -> None:
    root = Path(__file__).resolve().parents[2]
    readme = (root / "docs" / "getting-started.md").read_text()
    after = readme[readme.index("<!-- orders-example") :]
    blocks = after.split("```python\n")[1:4]
    sources = [
        (root / "examples/pipelines/orders.py").read_text(),
        (root / "examples/pipelines/orders.py").read_text(),
        (root / "tests/integration/test_user_events.py").read_text(),
    ]
    for block, source in zip(blocks, sources, strict=True):
        lines = [line for line in block.split("```")[0].splitlines() if line.strip()]
        assert lines
        missing = [line for line in lines if line not in source.splitlines()]
        assert not missing, f"getting-started.md lines not in the code the suite runs: {missing}"


def _raises(seed: int, partition: int, offset: int, seq: int) -> dict[str, Any]:
    if offset == 2:
        raise KeyError("boom")
    return {"x": offset}


def test_bad_user_input_is_refused_with_what_to_do() -> None:
    with pytest.raises(ConfigError, match=r"\['maxFilesPerTrigger'\] are the harness's"):
        FileDirectory("json", options=(("maxFilesPerTrigger", "1"),))
    with pytest.raises(ConfigError, match="nested columns, which CSV cannot hold"):
        FileDirectory("csv", orders.ROWS)
    with pytest.raises(ConfigError, match=r"\['Offset'\] .* clash"):
        Rows("Offset BIGINT", orders.order)
    rows = Rows("x BIGINT", _raises)
    schema = StructType([*ORDERS.fields[:3], StructField("x", LongType())])
    with pytest.raises(ConfigError, match=r"raised KeyError\('boom'\) at \(seed=0, partition=1, offset=2, seq=0\)"):
        list(source_rows(SourceConfig(), rows, schema, 1, 0, 3))
