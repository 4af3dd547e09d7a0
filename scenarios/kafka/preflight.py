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


def scenario_problem(scenario: Any, bootstrap: str | None = None) -> str | None:
    """Why ``scenario`` cannot run here, in one line, before anything starts; ``None`` when it can. Checked:
    the team's packages (``HARNESS_PACKAGES``) and every jar set the scenario names (``Scenario.jars``) are in
    the cache for the installed PySpark, with its Python side (Delta's: the ``delta`` extra); for a Kafka
    scenario the connector's jars, and the broker's jars or the ``bootstrap`` broker answering."""
    from harness.spark.jars import PACKAGES, problem, python_api_problem, unserved_problem, user_packages
    from scenarios.base import ResourceUnavailable

    try:
        if user_packages() and (reason := problem(PACKAGES)):
            return reason
    except ValueError as exc:  # a malformed coordinate in HARNESS_PACKAGES
        return f"HARNESS_PACKAGES: {exc}"
    for jar_set in scenario.jars:
        # A release no build serves is the first thing to say: installing the Python side would not help there.
        if reason := unserved_problem(jar_set) or python_api_problem(jar_set) or problem(jar_set):
            return f"scenario {scenario.name} cannot run here: {reason}"
    if not uses_kafka(scenario):
        return None if bootstrap is None else f"--kafka {bootstrap}: scenario {scenario.name} does not use Kafka"
    try:
        preflight(bootstrap)
    except ResourceUnavailable as exc:
        return str(exc).splitlines()[0]
    return None
