"""What every command shares: how a command refuses (one line on stderr, exit 2: no verdict)."""

from __future__ import annotations

import sys
from typing import Any


def fail(message: str) -> int:
    """Print ``harness: message`` on stderr; the exit code of a command that could not give a verdict."""
    print(f"harness: {message}", file=sys.stderr)
    return 2


def add_kafka_argument(p: Any) -> None:
    """``--kafka HOST:PORT`` for a command that runs scenarios."""
    p.add_argument(
        "--kafka",
        default=None,
        metavar="HOST:PORT",
        help="a Kafka scenario uses the broker at this address (each run makes a topic of its own) instead of "
        "starting a throw-away one",
    )


def kafka_problem(scenario: str, bootstrap: str | None) -> str | None:
    """Why a scenario cannot run here, in one line: a jar set it names (``Scenario.jars``, e.g. Delta) missing
    or of another Spark version; for a Kafka scenario the connector's jars, or a ``--kafka`` broker not
    answering. ``None`` when it can run."""
    from harness.spark.jars import problem
    from scenarios import get_scenario
    from scenarios.base import ResourceUnavailable
    from scenarios.kafka.preflight import preflight, uses_kafka

    spec = get_scenario(scenario)
    for jar_set in spec.jars:
        if reason := problem(jar_set):
            return f"scenario {spec.name} needs {reason}"
    if not uses_kafka(spec):
        return None if bootstrap is None else f"--kafka {bootstrap}: scenario {scenario} does not use Kafka"
    try:
        preflight(bootstrap)
    except ResourceUnavailable as exc:
        return str(exc).splitlines()[0]
    return None
