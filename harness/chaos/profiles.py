"""Named chaos settings profiles (like Hypothesis's ``settings`` profiles).

Selection order: an explicit name (``--profile`` / ``--harness-profile``),
then ``$HARNESS_PROFILE``, then ``dev``. Profiles are immutable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

PROFILE_ENV = "HARNESS_PROFILE"


@dataclass(frozen=True)
class Profile:
    """How big a chaos campaign is.

    ``hard_kill_ratio`` is the share of generated faults that SIGKILL the
    driver (a new JVM, ~7 s); the rest are soft (an injected exception: the
    query restarts inside the same driver, ~1-2 s). ``shrink_budget_s`` bounds
    the time spent shrinking a failure (each candidate is a full run).
    A campaign depends on its seed alone unless it is given an example database
    (``--database``, :mod:`harness.chaos.database`). ``timed_kills``: also draw timed kills (``batch.time``), which
    are not deterministic (a replay lands a few ms elsewhere), so only long unattended campaigns draw them.
    ``volume``: rows per example (10^5..10^6 for volume campaigns); ``batch_rows``: rows per batch."""

    name: str
    examples: int
    max_rounds: int
    max_faults: int
    hard_kill_ratio: float
    shrink_budget_s: float
    timed_kills: bool = False
    #: Rows per example (the drawn amounts scaled up to it, batches with them; see ``chaos_specs``); ``None``:
    #: the scenario's own small amounts (about 200 rows).
    volume: int | None = None
    #: Rows a batch may take (fewer: more batches per example, past the file sink's log compactions); ``None``:
    #: the scenario's (scaled with ``volume``).
    batch_rows: int | None = None
    #: Triggers the examples run under (``RunSpec.trigger``), drawn per example and shrunk towards the first;
    #: empty: the default rounds.
    triggers: tuple[str, ...] = ()
    #: Rounds (job runs, for a scheduled trigger) of every example; ``None``: 1..``max_rounds``, drawn.
    rounds: int | None = None

    def with_triggers(self, triggers: tuple[str, ...], rounds: int | None = None) -> Profile:
        return replace(self, triggers=triggers or self.triggers, rounds=rounds if rounds is not None else self.rounds)

    def with_examples(self, examples: int | None) -> Profile:
        return self if examples is None else replace(self, examples=examples)

    def with_shrink_budget(self, seconds: float | None) -> Profile:
        return self if seconds is None else replace(self, shrink_budget_s=seconds)

    def with_volume(self, volume: int | None, batch_rows: int | None = None) -> Profile:
        sized = self if volume is None else replace(self, volume=volume)
        return sized if batch_rows is None else replace(sized, batch_rows=batch_rows)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("dev", examples=5, max_rounds=2, max_faults=2, hard_kill_ratio=0.25, shrink_budget_s=300),
        Profile("ci", examples=3, max_rounds=2, max_faults=2, hard_kill_ratio=0.2, shrink_budget_s=180),
        Profile(
            "nightly",
            examples=50,
            max_rounds=4,
            max_faults=4,
            hard_kill_ratio=0.3,
            shrink_budget_s=1800,
            timed_kills=True,
        ),
    )
}


def get_profile(name: str | None = None) -> Profile:
    """The profile called ``name`` (or ``$HARNESS_PROFILE``, or ``dev``);
    ``KeyError`` lists the known names."""
    chosen = name or os.environ.get(PROFILE_ENV) or "dev"
    if chosen not in PROFILES:
        raise KeyError(f"unknown profile {chosen!r}; known: {', '.join(PROFILES)}")
    return PROFILES[chosen]
