"""The replayable source inside real Spark: determinism, admission, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from harness.inspector import read_batches
from scenarios.admission import offsets_from_json, plan_batches
from scenarios.rowgen import SourceConfig
from scenarios.tap import advance, init_tap

END = {"0": 37, "1": 23}


def _epoch(row: tuple[Any, ...]) -> tuple[Any, ...]:
    # collect() yields naive local datetimes; the generator yields aware UTC ones.
    return (*row[:5], row[5].timestamp())


def _batch(spark: SparkSession, **opts: str) -> list[tuple[object, ...]]:
    df = spark.read.format("replayable").options(**opts).load()
    return sorted(_epoch(tuple(r)) for r in df.collect())


def test_batch_read_equals_pure_rows_every_time(spark: SparkSession) -> None:
    cfg = SourceConfig(seed=5, rows_per_offset=2, key_skew=1.0, disorder_ms=500)
    opts = {**cfg.to_options(), "end": json.dumps(END)}
    first = _batch(spark, **opts)
    expected = sorted(_epoch(r) for p, n in END.items() for r in cfg.rows(int(p), 0, n))
    assert len(first) == (37 + 23) * 2
    assert first == expected
    assert _batch(spark, **opts) == first


def test_stream_batches_follow_admission_and_trigger_available_now(spark: SparkSession, tmp_path: Path) -> None:
    tap, ckpt, out = tmp_path / "tap.json", tmp_path / "ckpt", tmp_path / "out"
    init_tap(tap, 2)
    advance(tap, {0: 57, 1: 18})
    stream = (
        spark.readStream.format("replayable")
        .options(seed="9", tap=str(tap), max_rows_per_batch="25", checkpoint=str(ckpt))
        .load()
    )
    q = (
        stream.writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(ckpt))
        .trigger(availableNow=True)
        .start()
    )
    q.awaitTermination()
    predicted = plan_batches({0: 0, 1: 0}, {0: 57, 1: 18}, 25)
    recorded = [offsets_from_json(b.offsets.sources[0]) for b in read_batches(ckpt) if b.offsets]
    assert recorded == [end for _, end in predicted]
    assert all(b.committed for b in read_batches(ckpt))
    rows = sorted(_epoch(tuple(r)) for r in spark.read.parquet(str(out)).collect())
    cfg = SourceConfig(seed=9)
    assert rows == sorted(map(_epoch, [*cfg.rows(0, 0, 57), *cfg.rows(1, 0, 18)]))


def test_missing_availability_option_is_a_clear_error(spark: SparkSession) -> None:
    with pytest.raises(Exception, match="set option 'tap'"):
        spark.read.format("replayable").option("seed", 1).load().collect()


def test_bench_floor_source_yields_rows_per_batch_in_the_replayable_schema(spark: SparkSession, tmp_path: Path) -> None:
    from harness.bench.floor import FORMAT as FLOOR
    from harness.bench.floor import FloorDataSource

    spark.dataSource.register(FloorDataSource)
    stream = spark.readStream.format(FLOOR).option("rows_per_batch", 7).load()
    assert stream.schema == spark.read.format("replayable").option("end", json.dumps(END)).load().schema
    query = (
        stream.writeStream.format("memory").queryName("bench_floor_rows")
        .option("checkpointLocation", str(tmp_path / "ckpt")).trigger(once=True).start()
    )  # fmt: skip
    query.awaitTermination()
    assert [p.numInputRows for p in query.recentProgress if p.numInputRows] == [7]
    assert spark.table("bench_floor_rows").count() == 7
