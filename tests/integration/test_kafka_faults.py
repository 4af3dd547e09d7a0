"""Kafka faults (issue 27 point 4) against a real KRaft broker, each with Spark 4.2's measured outcome:

- ``kill_broker`` at ``after_offsets_logged`` of batch 1: the broker is SIGKILLed as the batch starts reading, its
  supervisor restarts it on the same ports and data after 1 s; Spark's consumers retry and the batch completes
  after the restart (no query failure, no driver restart): exactly-once.
- ``age_out_records`` with ``failOnDataLoss=true`` (Spark's default): the query fails loudly, naming the offsets it
  could not read; the run says which records were deleted unread (exit 2, never a pass).
- ``age_out_records`` with ``failOnDataLoss=false``: Spark skips them; the oracle still expects them, so they are
  ``lost``, reported as allowed by ``failOnDataLoss=false`` with topic, partition and offsets: exactly-once.
- ``add_partitions``: a partition added between runs is read from offset 0: exactly-once.

One supervised broker serves the module (``shared_broker``; the heavy tier also kills a run's own broker) and
one driver runs every run (no standby: no fault here kills a driver)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.engine.pool import DriverPool
from harness.engine.report import render_text, to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument
from harness.spark.procs import TOKEN_PREFIX_ENV
from scenarios.kafka import client
from scenarios.kafka.resource import BOOTSTRAP_ENV, BROKER_FILE_ENV, shared_broker, topic_for
from tests.integration.clirun import TOKEN_PREFIX, leftover_processes

SKIPS_LOST = "scenarios.library.kafka_file_sink:SKIPS_LOST"


@pytest.fixture(scope="module")
def broker_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The shared broker's directory (``kafka.log``, ``kafka.json``); brokers carry this suite's token prefix."""
    before = os.environ.get(TOKEN_PREFIX_ENV)
    os.environ[TOKEN_PREFIX_ENV] = TOKEN_PREFIX
    work = tmp_path_factory.mktemp("kafka")
    try:
        with shared_broker(work):
            yield work
    finally:
        if before is None:
            os.environ.pop(TOKEN_PREFIX_ENV, None)
        else:
            os.environ[TOKEN_PREFIX_ENV] = before
    assert BOOTSTRAP_ENV not in os.environ and BROKER_FILE_ENV not in os.environ
    assert leftover_processes() == [], "a broker or JVM outlived the module"


@pytest.fixture(scope="module")
def pool(broker_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DriverPool]:
    shared = DriverPool(tmp_path_factory.mktemp("pool"), "local[2]", {}, token=TOKEN_PREFIX + "kafka-faults")
    yield shared
    shared.close()


def play(
    pool: DriverPool, run_dir: Path, scenario: str, *kills: str, nemesis: tuple[str, ...] = ()
) -> tuple[dict[str, Any], str]:
    log: list[str] = []
    faults = tuple(dataclasses.replace(parse_kill_argument(k), id=f"x{i + 1}") for i, k in enumerate(kills))
    spec = RunSpec(scenario, 3, kills=0, rounds=2, extra_faults=faults, nemesis=nemesis)
    outcome = run_spec(spec, run_dir=run_dir, echo=log.append, pool=pool)
    return to_json(outcome) | {"text": render_text(outcome), "exit": outcome.exit_code}, "\n".join(log[-40:])


def _history(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]


def _batch_ms(run_dir: Path, batch: int) -> int:
    return next(
        int(e["value"]["duration_ms"])
        for e in _history(run_dir)
        if e["f"] == "batch" and e["value"].get("batch_id") == batch
    )


def _assert_broker_kill_healed(doc: dict[str, Any], log: str, run_dir: Path, broker_log: Path) -> None:
    assert doc["verdict"] == "exactly-once", log + doc["text"]
    assert [(k["action"], k["point"], k["batch"]) for k in doc["kills_fired"]] == [
        ("kill_broker", "after_offsets_logged", 1)
    ], doc["kills_fired"]
    events = _history(run_dir)
    # The consumers retried: no query failed and no driver was restarted; batch 1 waited for the broker.
    assert not [e for e in events if e["type"] == "fail"], [e for e in events if e["type"] == "fail"]
    assert sum(1 for e in events if e["f"] == "crash") == 0
    assert _batch_ms(run_dir, 1) >= 1000, _batch_ms(run_dir, 1)
    assert "harness supervisor: broker serving again" in broker_log.read_text()
    print(f"\nbatch 1 across the broker's kill and restart: {_batch_ms(run_dir, 1)} ms")


def test_a_broker_killed_mid_batch_is_restarted_and_the_batch_completes_exactly_once(
    pool: DriverPool, broker_dir: Path, tmp_path: Path
) -> None:
    before = json.loads((broker_dir / "kafka.json").read_text())["pid"]
    run = tmp_path / "killed"
    doc, log = play(pool, run, "kafka_file_sink", "after_offsets_logged:1@kill_broker")
    _assert_broker_kill_healed(doc, log, run, broker_dir / "kafka.log")
    assert json.loads((broker_dir / "kafka.json").read_text())["pid"] != before  # same ports, a new process
    assert doc["observed_rows"] == doc["expected_rows"] > 0


def test_records_aged_out_before_the_query_read_them_fail_it_loudly_naming_them(
    pool: DriverPool, broker_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "strict"
    doc, log = play(pool, run, "kafka_file_sink", nemesis=("age_out_records",))
    assert doc["exit"] == 2 and doc["verdict"] == "unknown" and doc["query_failed"], log + doc["text"]
    [nemesis] = [k for k in doc["kills_fired"] if k["action"] == "nemesis"]
    [(partition, start, end)] = nemesis["context"]["damage"]["lost"]
    topic = topic_for(run / "resource")
    named = f"topic {topic} partition {partition} offsets [{start}, {end})"
    first = doc["text"].splitlines()[0]
    assert first.startswith("query failed loudly, no verdict") and named in first, doc["text"]
    assert "refused to skip them (failOnDataLoss=true)" in first
    # Spark's own words, with the offset it could not fetch.
    assert "Some data may have been lost" in doc["error"], doc["error"]
    assert client.start_offsets(pool_bootstrap(), topic)[partition] == end > start


def test_records_aged_out_unread_are_skipped_as_fail_on_data_loss_false_allows(
    pool: DriverPool, broker_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "lenient"
    doc, log = play(pool, run, SKIPS_LOST, nemesis=("age_out_records",))
    assert doc["verdict"] == "exactly-once" and doc["exit"] == 0, log + doc["text"]
    [nemesis] = [k for k in doc["kills_fired"] if k["action"] == "nemesis"]
    [(partition, start, end)] = nemesis["context"]["damage"]["lost"]
    topic = topic_for(run / "resource")
    # The oracle expected the deleted records (regenerated from the tap); Spark skipped exactly those (the rows of
    # them that pass the pipeline's filter), reported as allowed, not as anomalies.
    allowed = sorted((a["partition"], a["offset"]) for a in doc["allowed"])
    assert doc["anomalies"] == [] and len(allowed) == doc["expected_rows"] - doc["observed_rows"] > 0
    assert all(p == partition and start <= o < end for p, o in allowed), (allowed, start, end)
    window = {"partition": partition, "start": start, "end": end, "where": f"topic {topic}"}
    assert doc["allowed_losses"] == [{**window, "setting": "failOnDataLoss=false"}]
    summary = doc["text"].splitlines()[0]
    assert summary.startswith("exactly-once held") and "not a violation" in summary
    lost = f"{len(allowed)} row(s) lost as allowed by failOnDataLoss=false"
    assert f"{lost} (topic {topic} partition {partition} offsets [{start}, {end}))" in summary


def test_a_partition_added_between_runs_is_read_from_its_start(
    pool: DriverPool, broker_dir: Path, tmp_path: Path
) -> None:
    run = tmp_path / "grown"
    doc, log = play(pool, run, "kafka_file_sink", nemesis=("add_partitions",))
    assert doc["verdict"] == "exactly-once", log + doc["text"]
    topic = topic_for(run / "resource")
    ends = client.end_offsets(pool_bootstrap(), topic)
    assert sorted(ends) == [0, 1, 2] and ends[2] > 0
    last = doc["batches"][-1]
    assert dict(last["end"]) == ends and last["start"][2] == 0, doc["batches"]
    # Rows of the new partition (those the pipeline's filter keeps) are visible, as the oracle expects them.
    import pyarrow.parquet as pq

    def new_rows(name: str) -> int:
        return pq.read_table(run / "oracle" / f"{name}.parquet").column("partition").to_pylist().count(2)

    assert doc["observed_rows"] == doc["expected_rows"] and new_rows("observed") == new_rows("expected") > 0


@pytest.mark.heavy
def test_a_runs_own_broker_killed_mid_batch_is_restarted_by_the_runner(
    pool: DriverPool, broker_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(BOOTSTRAP_ENV)  # this run starts (and supervises) a broker of its own
    monkeypatch.delenv(BROKER_FILE_ENV)
    run = tmp_path / "own"
    doc, log = play(pool, run, "kafka_file_sink", "after_offsets_logged:1@kill_broker")
    _assert_broker_kill_healed(doc, log, run, run / "resource" / "kafka.log")


def pool_bootstrap() -> str:
    return os.environ[BOOTSTRAP_ENV]
