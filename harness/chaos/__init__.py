"""Chaos campaigns: Hypothesis schedules over a scenario (shrunk, bundled, replayed), their profiles, sharded
workers, the stateful machine, and the step census that lets a campaign fault any step of a sink's code.
"""

from __future__ import annotations

from harness._lazy import lazy_exports

#: Public name -> (module, attribute).
_EXPORTS = {
    "CampaignResult": ("harness.chaos.result", "CampaignResult"),
    "Profile": ("harness.chaos.profiles", "Profile"),
    "chaos_state_machine": ("harness.chaos.statemachine", "chaos_state_machine"),
    "get_profile": ("harness.chaos.profiles", "get_profile"),
    "load_bundle": ("harness.chaos.bundle", "load_bundle"),
    "render_campaign": ("harness.chaos.result", "render_campaign"),
    "replay_bundle_campaign": ("harness.chaos.campaign", "replay_bundle_campaign"),
    "run_campaign": ("harness.chaos.campaign", "run_campaign"),
    "run_parallel_campaign": ("harness.chaos.parallel", "run_parallel_campaign"),
    "take_census": ("harness.chaos.census", "take_census"),
    "write_bundle": ("harness.chaos.bundle", "write_bundle"),
}

__all__ = [
    "CampaignResult",
    "Profile",
    "chaos_state_machine",
    "get_profile",
    "load_bundle",
    "render_campaign",
    "replay_bundle_campaign",
    "run_campaign",
    "run_parallel_campaign",
    "take_census",
    "write_bundle",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
