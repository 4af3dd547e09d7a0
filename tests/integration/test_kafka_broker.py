"""A real throw-away KRaft broker (scenarios/kafka/broker.py), the harness's Kafka client against it
(scenarios/kafka/client.py), and Spark's Kafka source reading a topic from the jars set-up cached."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from harness.spark import jars
from harness.spark.procs import new_token, pids_with_token
from scenarios.kafka import client
from scenarios.kafka.broker import KafkaBroker, throwaway_kafka
from scenarios.kafka.client import Record
from tests.ci_skips import missing


def _topic() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def _records(partitions: int, per_partition: int) -> list[Record]:
    return [
        Record(p, f"v{p}-{i}".encode(), key=f"k{i}".encode(), headers=(("seq", str(i).encode()),))
        for i in range(per_partition)
        for p in range(partitions)
    ]


def test_topics_produce_read_back_add_partitions_and_age_records_out(kafka_broker: KafkaBroker) -> None:
    print(f"\nKafka broker startup_s={kafka_broker.startup_s:.2f}")
    assert kafka_broker.startup_s is not None and kafka_broker.bootstrap.startswith("127.0.0.1:")
    bootstrap, topic = kafka_broker.bootstrap, _topic()
    client.create_topic(bootstrap, topic, 2, {"retention.ms": "-1"})
    assert client.topic_exists(bootstrap, topic)
    records = _records(2, 5)
    offsets = client.produce(bootstrap, topic, records)
    assert offsets == [i for i in range(5) for _ in range(2)]
    assert client.end_offsets(bootstrap, topic) == {0: 5, 1: 5}

    got = client.read_range(bootstrap, topic, {0: (1, 3), 1: (0, 5)})
    assert [(f.partition, f.offset, f.key, f.value, f.headers) for f in got] == [
        (0, 1, b"k1", b"v0-1", (("seq", b"1"),)),
        (0, 2, b"k2", b"v0-2", (("seq", b"2"),)),
        *((1, i, f"k{i}".encode(), f"v1-{i}".encode(), (("seq", str(i).encode()),)) for i in range(5)),
    ]
    assert all(f.timestamp_ms > 0 for f in got)

    client.add_partitions(bootstrap, topic, 3)
    assert client.produce(bootstrap, topic, [Record(2, b"new"), Record(2, None, key=b"tombstone")]) == [0, 1]
    assert client.end_offsets(bootstrap, topic) == {0: 5, 1: 5, 2: 2}
    assert [f.value for f in client.read_range(bootstrap, topic, {2: (0, 2)})] == [b"new", None]

    client.delete_records(bootstrap, topic, {0: 3})
    assert client.start_offsets(bootstrap, topic) == {0: 3, 1: 0, 2: 0}
    with pytest.raises(client.KafkaClientError, match=r"partition 0: cannot read \[1, 4\), it holds \[3, 5\)"):
        client.read_range(bootstrap, topic, {0: (1, 4)})
    assert [f.offset for f in client.read_range(bootstrap, topic, {0: (3, 5)})] == [3, 4]


def test_errors_name_the_topic_or_the_address(kafka_broker: KafkaBroker) -> None:
    with pytest.raises(client.TopicMissing, match="'nope' does not exist"):
        client.end_offsets(kafka_broker.bootstrap, "nope")
    with pytest.raises(client.BrokerUnreachable, match=r"Kafka broker at 127\.0\.0\.1:9 unreachable"):
        client.list_topics("127.0.0.1:9", timeout_s=2)


def test_kill_and_restart_keep_acknowledged_records_and_leave_no_process(tmp_path: Path) -> None:
    token = new_token()
    try:
        with throwaway_kafka(tmp_path, token) as broker:
            bootstrap, topic = broker.bootstrap, _topic()
            assert broker.pid is not None and pids_with_token(token) == [broker.pid]
            client.create_topic(bootstrap, topic, 2)
            client.produce(bootstrap, topic, _records(2, 20))
            broker.kill()
            assert broker.pid is None and pids_with_token(token) == []
            broker.restart()
            print(f"\nKafka broker startup_s={broker.startup_s:.2f} after a SIGKILL")
            assert broker.bootstrap == bootstrap and (broker.log_dir / f"{topic}-0").is_dir()
            assert client.end_offsets(bootstrap, topic) == {0: 20, 1: 20}
            values = [f.value for f in client.read_range(bootstrap, topic, {1: (0, 20)})]
            assert values == [f"v1-{i}".encode() for i in range(20)]
    except Exception as exc:
        if "kafka-broker" in str(exc) and "harness setup" in str(exc):
            pytest.skip(missing(str(exc)))
        raise
    assert pids_with_token(token) == []
    assert "Kafka Server started" in (tmp_path / "kafka.log").read_text()
    assert not (tmp_path / "kafka").exists()


def test_spark_reads_a_topic_with_the_cached_connector(spark: SparkSession, kafka_broker: KafkaBroker) -> None:
    reason = jars.problem(jars.KAFKA_CONNECTOR)
    if reason:
        pytest.skip(missing(reason))
    assert "spark-sql-kafka-0-10" in spark.conf.get("spark.jars", "")
    bootstrap, topic = kafka_broker.bootstrap, _topic()
    client.create_topic(bootstrap, topic, 2)
    records = _records(2, 4)
    client.produce(bootstrap, topic, records)
    df = spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic).load()
    rows = sorted((r.partition, r.offset, bytes(r.key), bytes(r.value)) for r in df.collect())
    assert rows == sorted((r.partition, int(r.key[1:]), r.key, r.value) for r in records if r.key and r.value)
