"""The README example "Your own input": a user's pipeline over JSON events with its own schema (a nested
struct, parsed and aggregated), fed by files the harness publishes into a directory, checked by a chaos
campaign. The pipeline is :mod:`examples.pipelines.orders`, written as for a file-directory input."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.chaos(scenario="examples.pipelines.orders:SCENARIO", examples=2, profile="ci", seed=5)
def test_revenue_per_country_is_exactly_once(chaos_run: Any) -> None:
    result = chaos_run()
    result.assert_exactly_once()
    assert result.examples, "the campaign ran no example"
