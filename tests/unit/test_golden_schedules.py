"""What seeds generate stays what it was (tests/golden/schedules.py says what is pinned and how to rewrite it):
every library scenario's ``run --seed S --kills 2`` schedule and first ``ci`` campaign draws for seeds 1-20, and
the JSON form a bundle saves. Written before the house is cut into slices, to pass unchanged after."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from harness.chaos.strategies import describe_spec
from harness.engine.spec import RunSpec
from scenarios import all_scenarios
from tests.admission import needs_read_limits
from tests.golden.schedules import GOLDEN, SEEDS, campaign_specs, hypothesis_version, run_schedule

pytestmark = [pytest.mark.unit, needs_read_limits]
PINNED: dict[str, Any] = json.loads(GOLDEN.read_text())
REWRITE = "python -m tests.golden.schedules (only for a change meant to alter generated schedules)"


def test_every_library_scenario_is_pinned() -> None:
    assert sorted(all_scenarios()) == sorted(k for k in PINNED if k != "hypothesis"), REWRITE


def test_no_plugin_is_installed_beside() -> None:
    # Campaigns draw an installed plugin's actions: the pinned draws are those of an environment without one.
    from fault_injectors.plugins import plugin_actions

    assert plugin_actions() == (), "uninstall the harness plugins to compare the pinned draws"


@pytest.mark.parametrize("name", sorted(all_scenarios()))
def test_run_schedules_of_seeds_1_to_20_are_unchanged(name: str) -> None:
    for seed in SEEDS:
        assert run_schedule(name, seed) == PINNED[name]["run --kills 2"][str(seed)], (name, seed, REWRITE)


@pytest.mark.parametrize("name", sorted(all_scenarios()))
def test_campaign_draws_of_seeds_1_to_20_and_their_bundle_form_are_unchanged(name: str) -> None:
    if hypothesis_version() != PINNED["hypothesis"]:
        pytest.skip(f"pinned with Hypothesis {PINNED['hypothesis']}, running {hypothesis_version()}: {REWRITE}")
    forms = hashlib.sha256()
    for seed in SEEDS:
        specs = campaign_specs(name, seed)
        assert [describe_spec(s) for s in specs] == PINNED[name]["chaos --profile ci"][str(seed)], (name, seed)
        for spec in specs:
            saved = spec.to_json()
            assert RunSpec.from_dict(json.loads(saved)) == spec  # a bundle replays the spec it saved
            forms.update(saved.encode())
    assert forms.hexdigest() == PINNED[name]["spec json sha256"], (name, "a bundle's JSON form changed", REWRITE)
