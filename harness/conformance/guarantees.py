"""Delivery guarantees as data: names, their order, and how anomalies map to them.

Levels, weakest first: ``none`` (rows can be lost *and* duplicated, or the
sink cannot recover at all), ``at-most-once`` (rows can be lost, never
duplicated), ``at-least-once`` (rows can be duplicated, never lost),
``exactly-once``. ``at-most-once`` and ``at-least-once`` are incomparable.
A measured guarantee *satisfies* a declared one if it is at least as strong.
"""

from __future__ import annotations

from collections.abc import Iterable

EXACTLY_ONCE = "exactly-once"
AT_LEAST_ONCE = "at-least-once"
AT_MOST_ONCE = "at-most-once"
NONE = "none"
LEVELS = (NONE, AT_MOST_ONCE, AT_LEAST_ONCE, EXACTLY_ONCE)
DECLARABLE = (EXACTLY_ONCE, AT_LEAST_ONCE)

#: Anomaly kinds that mean "a row readers saw too often or that no single run produced".
EXTRA_KINDS = frozenset(
    {"duplicate", "uncommitted-visible", "replay-divergent", "phantom", "wrong-value", "offset-regression"}
)
#: Anomaly kinds that mean "a row readers never see".
LOSS_KINDS = frozenset({"lost", "not-recovered"})

_STRONGER: dict[str, frozenset[str]] = {
    EXACTLY_ONCE: frozenset(LEVELS),
    AT_LEAST_ONCE: frozenset({AT_LEAST_ONCE, NONE}),
    AT_MOST_ONCE: frozenset({AT_MOST_ONCE, NONE}),
    NONE: frozenset({NONE}),
}


def from_kinds(kinds: Iterable[str]) -> str:
    """The strongest guarantee consistent with the anomaly kinds observed."""
    ks = set(kinds)
    extra, loss = bool(ks & EXTRA_KINDS), bool(ks & LOSS_KINDS)
    if extra and loss:
        return NONE
    if loss:
        return AT_MOST_ONCE
    if extra:
        return AT_LEAST_ONCE
    return EXACTLY_ONCE


def satisfies(measured: str, declared: str) -> bool:
    """Whether ``measured`` is at least as strong as ``declared``."""
    if measured not in _STRONGER or declared not in _STRONGER:
        raise ValueError(f"unknown guarantee {measured!r} or {declared!r}; known: {', '.join(LEVELS)}")
    return declared in _STRONGER[measured]


def meet(*levels: str) -> str:
    """The strongest guarantee satisfying all of ``levels`` being observed together."""
    kinds: set[str] = set()
    for level in levels:
        if level in (NONE, AT_MOST_ONCE):
            kinds.add("lost")
        if level in (NONE, AT_LEAST_ONCE):
            kinds.add("duplicate")
    return from_kinds(kinds)


def check_declared(declared: str, where: str = "--guarantee") -> str:
    if declared not in DECLARABLE:
        raise ValueError(f"{where} {declared!r}: declare one of {', '.join(DECLARABLE)}")
    return declared
