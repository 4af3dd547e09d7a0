"""A raw Kafka topic's scenario may name its rows by Kafka's own coordinates (``partition,
offset``, ``topic``), which its transform keeps; a source without such columns is still refused."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from harness.sources import PythonSource
from scenarios import Scenario
from scenarios.kafka.source import KafkaTopic
from tests.unit.test_sources import _scenario

RAW = KafkaTopic(raw=True)
JSONL = "examples.connectors.jsonl_source:JsonlSource"


def _raw(identity: tuple[str, ...], transform: Any = lambda df: df) -> Scenario:
    return _scenario(source=RAW, identity=identity, transform=transform)


def test_kafka_coordinates_are_an_identity_of_a_raw_topic() -> None:
    assert _raw(("partition", "offset")).identity == ("partition", "offset")
    assert _raw(("topic", "partition", "offset")).identity == ("topic", "partition", "offset")
    assert _raw(("offset", "partition")).identity == ("offset", "partition")


@pytest.mark.parametrize("identity", [("partition", "offset", "seq"), ("seq",), ()])
def test_columns_a_raw_topic_does_not_carry_are_still_refused(identity: tuple[str, ...]) -> None:
    refused = r"adds no provenance columns.*or of its own columns \['offset'"
    with pytest.raises(ValueError, match=refused):
        _raw(identity)


def test_a_source_without_kafka_columns_is_refused_that_identity() -> None:
    python = PythonSource(JSONL, "examples.connectors._jsonl:log_context")
    refused = r"adds no provenance columns \['partition', 'offset', 'seq'\]; give"
    with pytest.raises(ValueError, match=refused):
        _scenario(source=python, identity=("partition", "offset"))
    assert KafkaTopic().identity_columns == ()
    assert RAW.identity_columns == ("topic", "partition", "offset")


def _output(*columns: str) -> Any:
    return SimpleNamespace(columns=list(columns))


def test_the_oracle_refuses_an_output_that_dropped_the_kafka_identity() -> None:
    kept = _raw(("partition", "offset"), transform=lambda df: _output("partition", "offset", "v"))
    got = kept.expected(_output(), None)  # type: ignore[arg-type]
    assert got.columns == ["partition", "offset", "v"]
    dropped = _raw(("partition", "offset"), transform=lambda df: _output("partition", "v"))
    with pytest.raises(ValueError, match=r"column\(s\) \['offset'\] are not in the output"):
        dropped.expected(_output(), None)  # type: ignore[arg-type]
    by_key = _raw(("key",), transform=lambda df: _output("key", "n"))  # your own columns: unchanged
    assert by_key.expected(_output(), None).columns == ["key", "n"]  # type: ignore[arg-type]
