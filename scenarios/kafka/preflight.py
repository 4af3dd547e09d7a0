"""Whether a scenario uses Kafka, and whether it can run here: checked before a run starts anything."""

from __future__ import annotations

from typing import Any

from scenarios.kafka.resource import kafka_resource
from scenarios.kafka.source import KafkaTopic


def uses_kafka(scenario: Any) -> bool:
    """Whether a scenario reads or writes Kafka (its source is a :class:`KafkaTopic` or its resource is
    :func:`kafka_resource`)."""
    return isinstance(scenario.source, KafkaTopic) or scenario.resource is kafka_resource


def preflight(bootstrap: str | None = None) -> None:
    """Before a Kafka run starts anything: the connector's jars match PySpark, and either the broker's jars are
    there (a broker will be started) or the broker at ``bootstrap`` answers. ``ResourceUnavailable`` with one
    line saying what to do otherwise."""
    from harness.spark.jars import KAFKA_BROKER, KAFKA_CONNECTOR, require

    require(KAFKA_CONNECTOR)
    if bootstrap is None:
        require(KAFKA_BROKER)
        return
    from scenarios.kafka.client import list_topics

    list_topics(bootstrap, timeout_s=10.0)
