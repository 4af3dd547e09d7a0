"""The orders pipeline under generated kill/restart schedules, against a real Kafka broker and Delta."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.chaos(scenario="pipelines.orders_to_delta:ORDERS", examples=2, profile="ci", seed=11)
def test_orders_reach_delta_exactly_once(chaos_run: Any) -> None:
    result = chaos_run()
    result.assert_exactly_once()
    assert sum(len(e.faults_fired) for e in result.examples) >= 1
