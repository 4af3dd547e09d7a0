"""The events pipeline under generated kill/restart schedules, writing a real Iceberg table."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.chaos(scenario="pipelines.events_to_iceberg:EVENTS", examples=2, profile="ci", seed=5)
def test_events_reach_iceberg_exactly_once(chaos_run: Any) -> None:
    result = chaos_run()
    result.assert_exactly_once()
    assert sum(len(e.faults_fired) for e in result.examples) >= 1
