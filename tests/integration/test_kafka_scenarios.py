"""Kafka as a scenario's input under real SIGKILLs (issue 27 point 3), with a real KRaft broker.

The pool's drivers read the topic with Spark's own Kafka source (the connector's jars from the set-up's
cache); one broker serves the module (``shared_broker``), each run gets a topic of its own. A correct
pipeline (``kafka_file_sink``) holds; its one-bug twin (``foreachBatch`` append without batch-id dedup)
is caught, with each duplicate located by Kafka partition and offset in the batch that read it, and the
record at that offset read back from the broker is the duplicated row."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.engine.pool import DriverPool
from harness.engine.report import to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument
from scenarios.kafka import client
from scenarios.kafka.resource import BOOTSTRAP_ENV, shared_broker, topic_for
from tests.integration.clirun import TOKEN_PREFIX, leftover_processes


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with shared_broker(tmp_path_factory.mktemp("kafka")) as bootstrap:
        yield bootstrap
    assert BOOTSTRAP_ENV not in os.environ


@pytest.fixture(scope="module")
def pool(broker: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DriverPool]:
    shared = DriverPool(tmp_path_factory.mktemp("pool"), "local[2]", {}, token=TOKEN_PREFIX + "kafka", standby=True)
    yield shared
    shared.close()
    assert leftover_processes() == [], "a harness run left processes behind"


def play(pool: DriverPool, run_dir: Path, scenario: str, *kills: str, rounds: int = 2) -> tuple[dict[str, Any], str]:
    log: list[str] = []
    faults = tuple(dataclasses.replace(parse_kill_argument(k), id=f"x{i + 1}") for i, k in enumerate(kills))
    spec = RunSpec(scenario, 1, kills=0, rounds=rounds, extra_faults=faults)
    outcome = run_spec(spec, run_dir=run_dir, echo=log.append, pool=pool)
    return to_json(outcome), "\n".join(log[-40:])


def test_kafka_file_sink_holds_under_sigkills(pool: DriverPool, broker: str, tmp_path: Path) -> None:
    doc, log = play(pool, tmp_path / "ok", "kafka_file_sink", "after_offsets_logged:0", "after_commit_logged:1")
    assert doc["verdict"] == "exactly-once", log
    assert sorted(k["point"] for k in doc["kills_fired"]) == ["after_commit_logged", "after_offsets_logged"], log
    assert doc["observed_rows"] == doc["expected_rows"] > 0 and doc["anomalies"] == []
    # Batches were located by Kafka offsets, and the last one read the topic to its end: every record produced.
    ends = client.end_offsets(broker, topic_for(tmp_path / "ok" / "resource"))
    assert doc["batches"] and all(b["committed"] and sorted(b["end"]) == [0, 1] for b in doc["batches"])
    assert {int(p): o for p, o in doc["batches"][-1]["end"].items()} == ends and sum(ends.values()) > 0


def test_naive_sink_on_kafka_is_caught_with_duplicates_located_by_kafka_offset(
    pool: DriverPool, broker: str, tmp_path: Path
) -> None:
    doc, log = play(pool, tmp_path / "bad", "scenarios.library.kafka_file_sink:NAIVE_APPEND", "sink.commit.after:1")
    assert doc["verdict"] == "violated", log
    dupes = [a for a in doc["anomalies"] if a["kind"] == "duplicate"]
    assert dupes and {a["kind"] for a in doc["anomalies"]} == {"duplicate"}, log
    assert {a["batch_id"] for a in dupes} == {1}, log
    batch1 = next(b for b in doc["batches"] if b["batch_id"] == 1)
    topic = topic_for(tmp_path / "bad" / "resource")
    for a in dupes[:5]:
        p, o = a["partition"], a["offset"]
        assert batch1["start"][p] <= o < batch1["end"][p], (a, batch1)
        [record] = client.read_range(broker, topic, {p: (o, o + 1)})
        assert json.loads(record.value or b"{}")["offset"] == o and record.offset == o
