"""The schedules the harness generates from seeds, as text: what ``tests/unit/test_golden_schedules.py`` pins.

For every library scenario and seeds 1-20: the schedule ``run SCENARIO --seed S --kills 2`` plays (its ops and
planned faults), and the first examples a ``ci``-profile chaos campaign seeded ``S`` draws (the campaign's own
Hypothesis settings and strategy, with a recorder in place of the run; no step census, so no ``sink.step``
draws). Each spec's JSON form (what a bundle saves) is pinned by a digest per scenario, and each must load back
to the same spec. A refactor that changes any of this changes what a user's seed or saved bundle replays.

``python -m tests.golden.schedules`` rewrites ``tests/golden/schedules.json`` (only for a change that means to
alter the generated schedules; say so in the commit).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from harness.chaos.profiles import get_profile
from harness.chaos.seeded import block_test, seed_only_draws
from harness.chaos.shards import Block
from harness.chaos.strategies import chaos_specs, describe_spec
from harness.engine.schedule import build_schedule
from harness.engine.spec import RunSpec
from scenarios import all_scenarios

GOLDEN = Path(__file__).with_name("schedules.json")
SEEDS = range(1, 21)
#: Campaign examples pinned per seed (the first ones Hypothesis generates).
EXAMPLES = 3


def run_schedule(name: str, seed: int) -> list[str]:
    """The ops and planned faults of ``run NAME --seed SEED --kills 2``, or the refusal's first line."""
    scenario = all_scenarios()[name]
    try:
        schedule = build_schedule(RunSpec(name, seed, kills=2), scenario)
    except ValueError as exc:
        return [f"refused: {str(exc).splitlines()[0]}"]
    ops = [f"{op.kind} {sorted(op.rows.items())}" if op.rows else op.kind for op in schedule.ops]
    return ops + [rule.describe() for rule in schedule.plan.rules]


def campaign_specs(name: str, seed: int) -> list[RunSpec]:
    """The first :data:`EXAMPLES` specs a ``ci`` campaign of ``name`` seeded ``seed`` draws."""
    profile = get_profile("ci")
    strategy = chaos_specs(
        all_scenarios()[name],
        max_rounds=profile.max_rounds,
        max_faults=profile.max_faults,
        hard_kill_ratio=profile.hard_kill_ratio,
        ref=name,
        timed=profile.timed_kills,
        volume=profile.volume,
        batch_rows=profile.batch_rows,
        triggers=profile.triggers,
        rounds=profile.rounds,
    )
    drawn: list[RunSpec] = []

    def record(spec: RunSpec) -> None:
        drawn.append(spec)

    with seed_only_draws():  # as the campaign draws
        block_test(strategy, record, Block(0, seed, EXAMPLES), None, b"golden")()
    return drawn


def hypothesis_version() -> str:
    import hypothesis

    return str(hypothesis.__version__)


def generate() -> dict[str, Any]:
    """Every scenario's pinned text (see the module), and the Hypothesis release that drew the campaigns'."""
    out: dict[str, Any] = {"hypothesis": hypothesis_version()}
    for name in sorted(all_scenarios()):
        runs, draws, forms = {}, {}, hashlib.sha256()
        for seed in SEEDS:
            runs[str(seed)] = run_schedule(name, seed)
            specs = campaign_specs(name, seed)
            draws[str(seed)] = [describe_spec(s) for s in specs]
            for spec in specs:
                forms.update(spec.to_json().encode())
        out[name] = {"run --kills 2": runs, "chaos --profile ci": draws, "spec json sha256": forms.hexdigest()}
    return out


def main() -> int:
    GOLDEN.write_text(json.dumps(generate(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
