"""A campaign's draws depend on its seed alone: loading a local module full of constants (as a user's pipeline
is, or the harness itself from a clone) changes what Hypothesis draws without :func:`seed_only_draws`, and
changes nothing with it."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from hypothesis.internal.cache import LRUCache
from hypothesis.internal.conjecture import providers

from harness.chaos.profiles import get_profile
from harness.chaos.seeded import block_test, seed_only_draws
from harness.chaos.shards import Block
from harness.chaos.strategies import chaos_specs, describe_spec
from scenarios import get_scenario
from tests.admission import needs_read_limits

pytestmark = [pytest.mark.unit, needs_read_limits]
NAME = "agg_update_naive"


def draws(seed: int, *, guarded: bool) -> list[str]:
    profile = get_profile("ci")
    strategy = chaos_specs(get_scenario(NAME), max_rounds=profile.max_rounds, max_faults=profile.max_faults,
                           hard_kill_ratio=profile.hard_kill_ratio, ref=NAME)  # fmt: skip
    drawn: list[str] = []
    test = block_test(strategy, lambda spec: drawn.append(describe_spec(spec)), Block(0, seed, 3), None, b"t")
    if guarded:
        with seed_only_draws():
            test()
    else:
        test()
    return drawn


def test_a_loaded_module_with_constants_changes_unguarded_draws_and_not_guarded_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {seed: draws(seed, guarded=True) for seed in range(1, 21)}
    # A user's module, loaded before the campaign draws: integer literals Hypothesis would pick up.
    (tmp_path / "pipeline_constants.py").write_text(
        "".join(f"C{i} = {n}\n" for i, n in enumerate((3, 7, 11, 13, 17, 23, 29, 31, 37, 1009, 7919, 104729)))
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("pipeline_constants")
    try:
        assert {seed: draws(seed, guarded=True) for seed in range(1, 21)} == before
        monkeypatch.setattr(providers, "CONSTANTS_CACHE", LRUCache(1024))  # as a fresh process would start
        unguarded = {seed: draws(seed, guarded=False) for seed in range(1, 21)}
        assert unguarded != before, "the module's constants should have reached some unguarded draw"
    finally:
        sys.modules.pop("pipeline_constants", None)
