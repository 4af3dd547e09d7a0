"""Campaign draws that depend on the seed alone, not on which modules the process has loaded.

Hypothesis mixes into its draws constants it reads from the source of every loaded module it counts as local
(not in ``site-packages``, not a test file: ``hypothesis.internal.conjecture.providers``), and caches them per
kind of draw for the life of the process. Which modules are local depends on how the harness is installed (a
clone or an editable install: its own modules count; a wheel: they do not), on the user's pipeline code and on
what ran earlier in the process, so one ``chaos SCENARIO --seed S`` drew other examples from a wheel than from a
clone (measured: seed 8 of ``agg_update_naive`` drew ``seed 5000`` in one and ``seed 1000`` in the other), and a
campaign's ``rerun`` line did not reproduce it elsewhere. While a campaign draws, :func:`seed_only_draws` gives
Hypothesis no local constants and a cache of its own; the user's own Hypothesis tests in the same process keep
both. (A saved bundle never depended on this: it replays the spec it stored.)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


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
