"""The campaign's shrink budget, not Hypothesis's own five minutes, decides when shrinking stops.

Hypothesis stops shrinking after ``MAX_SHRINKING_SECONDS`` (300 s) of its own
(``hypothesis.internal.conjecture.engine``) and prints a warning asking users to report slow shrinking to
Hypothesis. A campaign's examples are Spark runs of seconds each, so its profiles bound shrinking themselves
(``Profile.shrink_budget_s``: 180-300 s, 1800 s for ``deep``): without this, the deep profile's budget was cut to
five minutes, and a dev campaign whose budget ran out at the same moment printed Hypothesis's warning in the
middle of its report. While a campaign runs, :func:`shrink_cap` sets Hypothesis's limit past the budget.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

#: Seconds past the budget: the campaign's own check (no new run once it is spent) always comes first.
MARGIN_S = 120


@contextmanager
def shrink_cap(budget_s: float) -> Iterator[None]:
    """Within the block, Hypothesis shrinks for at least ``budget_s + MARGIN_S`` seconds (see the module)."""
    try:
        from hypothesis.internal.conjecture import engine
    except ImportError:  # another layout: Hypothesis's own limit stays
        yield
        return
    saved = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if not isinstance(saved, int):
        yield
        return
    engine.MAX_SHRINKING_SECONDS = max(saved, int(budget_s) + MARGIN_S)
    try:
        yield
    finally:
        engine.MAX_SHRINKING_SECONDS = saved
