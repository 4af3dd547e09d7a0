"""scenarios/kafka: the broker's start-up checks and error lines, the client's records, and the plugin's
``kafka_broker`` skip (no broker is started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import pytest_plugin
from harness.spark import jars
from harness.spark.cache import CACHE_ENV
from harness.spark.releases import KAFKA_BROKER_COORDINATES
from scenarios.base import ResourceUnavailable
from tests.ci_skips import PREFIX


def test_the_broker_without_jars_says_what_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scenarios.kafka.broker import throwaway_kafka

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "empty"))
    with pytest.raises(ResourceUnavailable, match=r"kafka-broker.*harness setup`"), throwaway_kafka(tmp_path):
        pass
    assert not (tmp_path / "kafka.log").exists()


def test_the_broker_without_java_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from scenarios.kafka import broker

    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    directory = jars.set_dir(jars.KAFKA_BROKER)
    directory.mkdir(parents=True)
    (directory / "kafka_2.13-4.1.1.jar").write_bytes(b"")
    jars.write_stamp(directory, KAFKA_BROKER_COORDINATES, ["kafka_2.13-4.1.1.jar"], 0.0)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(broker.shutil, "which", lambda name: None)
    with pytest.raises(ResourceUnavailable, match=r"'java' not found.*apt-get install"):
        broker.KafkaBroker(tmp_path / "b", "token")


def test_the_last_error_line_of_a_broker_log(tmp_path: Path) -> None:
    from scenarios.kafka.broker import last_error_line

    log = tmp_path / "kafka.log"
    assert last_error_line(log) == ""
    log.write_text("[t] INFO starting\n[t] ERROR Exiting Kafka due to fatal exception\n\tat x.y\n[t] INFO bye\n")
    assert last_error_line(log) == "[t] ERROR Exiting Kafka due to fatal exception"
    log.write_text("[t] INFO only info\n\n")
    assert last_error_line(log) == "[t] INFO only info"


def test_a_java_stack_trace_gives_its_exception_not_its_last_frame() -> None:
    from scenarios.kafka.broker import error_line

    text = 'Exception in thread "main" a.ConfigException: Invalid value zero\n\tat kafka.tools.StorageTool.main(x)\n'
    assert error_line(text) == 'Exception in thread "main" a.ConfigException: Invalid value zero'
    assert error_line("") == ""


def test_a_cluster_id_is_22_url_safe_characters() -> None:
    import re

    from scenarios.kafka.broker import _cluster_id

    ids = {_cluster_id() for _ in range(50)}
    assert len(ids) == 50 and all(re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}", i) for i in ids)


def test_records_are_small_frozen_values() -> None:
    from scenarios.kafka.client import Record

    record = Record(1, b"v")
    assert (record.key, record.headers) == (None, ())
    with pytest.raises(AttributeError):
        record.partition = 2  # type: ignore[misc]


def test_the_plugins_skip_for_a_missing_broker_fails_under_ci() -> None:
    assert pytest_plugin.MISSING_PREFIX == PREFIX


def test_the_package_is_lazy_and_every_public_name_resolves_to_its_owner() -> None:
    import importlib
    import subprocess
    import sys

    code = "import sys, scenarios.kafka; print(sorted(m for m in sys.modules if 'kafka' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['scenarios.kafka']"
    kafka = importlib.import_module("scenarios.kafka")
    for name in kafka.__all__:
        module, attr = kafka._EXPORTS[name]
        assert getattr(kafka, name) is getattr(importlib.import_module(module), attr)


class _Failing:
    def __init__(self, code: int) -> None:
        self.code = code

    def result(self, timeout: float) -> None:
        from confluent_kafka import KafkaError, KafkaException

        raise KafkaException(KafkaError(self.code))


@pytest.mark.parametrize(("code", "retriable"), [(6, True), (5, True), (75, True), (36, False), (87, False)])
def test_a_broker_error_is_retriable_when_kafkas_protocol_says_so(code: int, retriable: bool) -> None:
    """CI failed on "Not leader for partition" (6) that librdkafka's own flag called permanent; a topic that
    already exists (36) or a bad record (87) stays permanent."""
    from scenarios.kafka import client

    with pytest.raises(client.KafkaClientError) as info:
        client._result("127.0.0.1:1", "list latest offsets of 't'", _Failing(code), 1.0)
    assert info.value.retriable is retriable
    assert "list latest offsets of 't' on 127.0.0.1:1 failed: Broker:" in str(info.value)
