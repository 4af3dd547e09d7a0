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
    """Why a Kafka scenario cannot run here (jars missing or of another Spark version, ``--kafka`` broker not
    answering), in one line; ``None`` when it can, or when the scenario does not use Kafka."""
    from scenarios import get_scenario
    from scenarios.base import ResourceUnavailable
    from scenarios.kafka.preflight import preflight, uses_kafka

    if not uses_kafka(get_scenario(scenario)):
        return None if bootstrap is None else f"--kafka {bootstrap}: scenario {scenario} does not use Kafka"
    try:
        preflight(bootstrap)
    except ResourceUnavailable as exc:
        return str(exc).splitlines()[0]
    return None
