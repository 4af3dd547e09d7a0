"""The Kafka source spec's pure parts: option checks, records, the checkpoint's Kafka offsets and the batch spans
the verdict locates anomalies with. Checkpoint files are written in the exact shape Spark's Kafka source writes
(``sources/0/0``: a zero byte, ``v1``, a newline, then JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.inspector.synth import commit_text, offsets_text
from harness.verdict.check import batch_spans
from harness.verdict.checker import BatchSpan
from scenarios.kafka.offsets import initial_offsets, kafka_offsets
from scenarios.kafka.source import KafkaTopic, oracle_ranges
from scenarios.rowgen import ConfigError, SourceConfig


def _checkpoint(root: Path, ends: list[dict[str, int]], committed: int, start: dict[str, int] | None) -> Path:
    for d in ("offsets", "commits", "sources/0"):
        (root / d).mkdir(parents=True, exist_ok=True)
    for n, end in enumerate(ends):
        (root / "offsets" / str(n)).write_text(offsets_text([{"orders": end}], 0, 1795357150553 + n))
        if n < committed:
            (root / "commits" / str(n)).write_text(commit_text(0))
    if start is not None:
        (root / "sources" / "0" / "0").write_bytes(b"\x00v1\n" + json.dumps({"orders": start}).encode())
    return root


def test_initial_offsets_read_the_zero_byte_format_and_kafka_offsets_parse_one_topic(tmp_path: Path) -> None:
    ck = _checkpoint(tmp_path, [{"0": 5}], 1, {"0": 2, "1": 0})
    assert initial_offsets(ck) == {"orders": {"0": 2, "1": 0}}
    assert initial_offsets(tmp_path / "none") is None
    assert kafka_offsets({"orders": {"0": 2, "1": 7}}, "orders") == {0: 2, 1: 7}
    assert kafka_offsets({"orders": {"x": 2}}, "orders") is None and kafka_offsets({"0": 3}, "orders") is None


def test_spans_follow_the_offset_log_and_start_where_the_source_started(tmp_path: Path) -> None:
    # startingOffsets=latest: the source started at 4 in partition 0; partition 1 appeared in batch 1 (from 0).
    ck = _checkpoint(tmp_path, [{"0": 10}, {"0": 15, "1": 6}, {"0": 20, "1": 9}], 2, {"0": 4})
    assert batch_spans(ck) == [
        BatchSpan(0, {0: 4}, {0: 10}, True),
        BatchSpan(1, {0: 10, 1: 0}, {0: 15, 1: 6}, True),
        BatchSpan(2, {0: 15, 1: 6}, {0: 20, 1: 9}, False),
    ]
    # The oracle reads what the committed batches cover: [start, end of batch 1), a new partition from log start.
    assert oracle_ranges(ck, "orders", {0: 0, 1: 2}) == {0: (4, 15), 1: (2, 6)}
    assert oracle_ranges(_checkpoint(tmp_path / "empty", [{"0": 3}], 0, None), "orders", {}) == {}


def test_options_the_harness_owns_or_does_not_know_are_refused_in_one_line() -> None:
    with pytest.raises(ConfigError, match=r"subscribe.*are the harness's"):
        KafkaTopic(options=(("subscribe", "other"),))
    with pytest.raises(ConfigError, match="unknown Kafka source option"):
        KafkaTopic(options=(("maxFilesPerTrigger", "1"),))
    with pytest.raises(ConfigError, match="key column 'nope'"):
        KafkaTopic(key="nope")
    assert KafkaTopic(options=(("maxOffsetsPerTrigger", "5"), ("kafka.fetch.min.bytes", "1"))).provenance
    assert not KafkaTopic(raw=True).provenance
    with pytest.raises(ConfigError, match="rows_per_offset is 2"):
        KafkaTopic().feed("/nowhere", {0: 1}, 2)


def test_records_are_one_json_row_per_offset_with_optional_key_and_headers() -> None:
    config = SourceConfig(seed=3, partitions=2)
    plain = list(KafkaTopic().records(config, 1, 4, 6))
    assert [r.partition for r in plain] == [1, 1] and all(r.key is None and r.headers == () for r in plain)
    rows = [json.loads(r.value or b"") for r in plain]
    assert [(r["partition"], r["offset"], r["seq"]) for r in rows] == [(1, 4, 0), (1, 5, 0)]
    keyed = list(KafkaTopic(key="key", headers=True).records(config, 0, 0, 1))
    assert keyed[0].key == json.dumps(json.loads(keyed[0].value or b"")["key"]).encode()
    assert dict(keyed[0].headers) == {"partition": b"0", "offset": b"0"}
