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
    """Why a scenario cannot run here, in one line (:func:`scenarios.kafka.preflight.scenario_problem`): the
    team's packages or a jar set it names missing from the cache; for a Kafka scenario the connector's jars,
    or a ``--kafka`` broker not answering. ``None`` when it can run."""
    from scenarios import get_scenario
    from scenarios.kafka.preflight import scenario_problem

    return scenario_problem(get_scenario(scenario), bootstrap)
