"""Kafka for scenarios: a topic as a scenario's source (:class:`KafkaTopic`), a throw-away KRaft broker
(:func:`throwaway_kafka`, :class:`KafkaBroker`) and the harness's own client (:mod:`scenarios.kafka.client`:
topics, producing :class:`Record` s, reading exact offset ranges back as :class:`Fetched`).

Importing the package imports none of its modules (nor ``confluent_kafka``); each name loads on first use.
"""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "BrokerUnreachable": ("scenarios.kafka.client", "BrokerUnreachable"),
    "Fetched": ("scenarios.kafka.client", "Fetched"),
    "KafkaBroker": ("scenarios.kafka.broker", "KafkaBroker"),
    "KafkaClientError": ("scenarios.kafka.client", "KafkaClientError"),
    "KafkaTopic": ("scenarios.kafka.source", "KafkaTopic"),
    "Record": ("scenarios.kafka.client", "Record"),
    "TopicMissing": ("scenarios.kafka.client", "TopicMissing"),
    "throwaway_kafka": ("scenarios.kafka.broker", "throwaway_kafka"),
}

__all__ = [
    "BrokerUnreachable",
    "Fetched",
    "KafkaBroker",
    "KafkaClientError",
    "KafkaTopic",
    "Record",
    "TopicMissing",
    "throwaway_kafka",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
