"""Plugins: installed packages that add fault actions, found through an entry point (as pytest finds its
plugins through ``pytest11``).

A package declares, in its ``pyproject.toml``::

    [project.entry-points."spark_exactly_once_harness"]
    my_faults = "my_package.faults"

The entry point names a module (or any object) with ``FAULT_ACTIONS``, a sequence of
:class:`~fault_injectors.actions.FaultAction`. Each action's name must carry the plugin's prefix
(``my_faults.preempt`` above: the entry point's name, a dot, then the action's own name), so two
plugins never claim one name and a plan says whose action it runs. A plugin that fails to load, or an
action that breaks the contract, is refused in one line naming the entry point and its package.
"""

from __future__ import annotations

import re
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from fault_injectors.actions import BUILTIN, EFFECTS, NEEDS, FaultAction

#: The entry-point group the harness loads plugins from.
GROUP = "spark_exactly_once_harness"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_FIELDS = ("name", "verb", "doc", "effect", "from_watcher", "needs", "resource", "drawn")


class PluginError(ValueError):
    """An installed plugin cannot be used; the message names the entry point, its package and the fix."""


def _where(ep: EntryPoint) -> str:
    dist = ep.dist.name if ep.dist is not None else "an unknown package"
    return f"plugin {ep.name!r} ({ep.value}, package {dist}, entry-point group {GROUP!r})"


def _checked(ep: EntryPoint, candidate: object) -> FaultAction:
    where = _where(ep)
    missing = [f for f in _FIELDS if not hasattr(candidate, f)]
    if missing or not callable(getattr(candidate, "execute", None)):
        raise PluginError(f"{where}: {candidate!r} is no fault action (missing {missing or ['execute']})")
    assert isinstance(candidate, FaultAction)
    prefix, dot, own = candidate.name.partition(".")
    if prefix != ep.name or not dot or not _NAME.match(own):
        raise PluginError(
            f"{where}: action name {candidate.name!r} must be {ep.name!r}, a dot and a lower-case name "
            f"([a-z][a-z0-9_]*), e.g. '{ep.name}.{own or 'my_action'}'"
        )
    if candidate.effect not in EFFECTS:
        raise PluginError(f"{where}: action {candidate.name}: effect {candidate.effect!r}; known: {EFFECTS}")
    if candidate.needs not in NEEDS:
        raise PluginError(f"{where}: action {candidate.name}: needs {candidate.needs!r}; known: {NEEDS}")
    if not candidate.verb or not candidate.doc:
        raise PluginError(f"{where}: action {candidate.name}: give it a verb and a one-sentence doc")
    return candidate


def _load(ep: EntryPoint) -> list[FaultAction]:
    try:
        loaded = ep.load()
    except Exception as exc:
        raise PluginError(
            f"{_where(ep)} failed to load: {type(exc).__name__}: {exc}; fix it or uninstall its package"
        ) from None
    actions = getattr(loaded, "FAULT_ACTIONS", None)
    if actions is None or isinstance(actions, str | bytes):
        raise PluginError(f"{_where(ep)}: it has no FAULT_ACTIONS (a sequence of fault actions)")
    return [_checked(ep, a) for a in actions]


@cache
def plugin_actions() -> tuple[FaultAction, ...]:
    """The installed plugins' fault actions, by entry-point name, then in each plugin's order (loaded once
    per process). :class:`PluginError` for a plugin that cannot be used or claims a taken name."""
    found: dict[str, FaultAction] = {}
    builtin = {a.name for a in BUILTIN}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        for act in _load(ep):
            if act.name in builtin or act.name in found:
                raise PluginError(f"{_where(ep)}: action name {act.name!r} is taken by another action")
            found[act.name] = act
    return tuple(found.values())
