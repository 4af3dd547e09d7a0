"""Campaign draws that depend on the seed alone, not on which modules the process has loaded.

Hypothesis mixes into its draws constants it reads from the source of every loaded module it counts as local
(not in ``site-packages``, not a test file: ``hypothesis.internal.conjecture.providers``), and caches them per
kind of draw for the life of the process. Which modules are local depends on how the harness is installed (a
clone or an editable install: its own modules count; a wheel: they do not), on the user's pipeline code and on
what ran earlier in the process, so one ``chaos SCENARIO --seed S`` drew other examples from a wheel than from a
clone (measured: seed 8 of ``agg_update_naive`` drew ``seed 5000`` in one and ``seed 1000`` in the other), and a
campaign's ``rerun`` line did not reproduce it elsewhere. While a campaign draws, :func:`seed_only_draws` gives
Hypothesis no local constants and a cache of its own; the user's own Hypothesis tests in the same process keep
both. (A saved bundle never depended on this: it replays the spec it stored.) :func:`block_test` is the
Hypothesis test of one block of a campaign (:mod:`harness.chaos.shards`), seeded by the block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.database import ExampleDatabase
from hypothesis.strategies import SearchStrategy

from harness.chaos.shards import Block

if TYPE_CHECKING:
    from harness.engine.spec import RunSpec


@contextmanager
def seed_only_draws() -> Iterator[None]:
    """Within the block, Hypothesis draws from the seed and its own constants only (see the module)."""
    try:
        from hypothesis.internal.cache import LRUCache
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # a Hypothesis without local constants: draws depend on the seed already
        yield
        return
    names = ("_get_local_constants", "CONSTANTS_CACHE")
    if not all(hasattr(providers, name) for name in names):  # another layout: tests/golden pins the draws
        yield
        return
    saved: dict[str, Any] = {name: getattr(providers, name) for name in names}
    none = Constants()
    providers._get_local_constants = lambda: none
    providers.CONSTANTS_CACHE = LRUCache(1024)  # its entries hold the constants computed before; ours start empty
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(providers, name, value)


def block_test(
    strategy: SearchStrategy[RunSpec],
    play: Callable[[RunSpec], None],
    block: Block,
    database: ExampleDatabase | None,
    key: bytes,
) -> Callable[[], None]:
    """The Hypothesis test of one block: ``block.examples`` examples seeded ``block.seed``, the failures saved
    in ``database`` under ``key`` replayed first. (Hypothesis's ``@seed`` turns the database off, so the seed
    and the key are set as the attributes it reads; ``test_database_replays_first`` checks they still work.)"""
    test: Any = settings(
        max_examples=block.examples,
        deadline=None,
        database=database,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
        print_blob=False,
    )(given(strategy)(play))
    test._hypothesis_internal_use_seed = block.seed
    test._hypothesis_internal_database_key = key
    runs: Callable[[], None] = test
    return runs
