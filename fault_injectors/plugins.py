"""Plugins: installed packages that add fault actions and checkpoint nemeses, found through an entry point
(as pytest finds its plugins through ``pytest11``).

A package declares, in its ``pyproject.toml``::

    [project.entry-points."spark_exactly_once_harness"]
    my_faults = "my_package.faults"

The entry point names a module (or any object) with ``FAULT_ACTIONS``, a sequence of
:class:`~fault_injectors.actions.FaultAction`, and/or ``NEMESES``, a mapping of names to checkpoint
nemeses (``nemesis(checkpoint: Path) -> str``, as :mod:`fault_injectors.nemesis`'s: damage the stopped
query's checkpoint, say what in one line, raise ``NemesisError`` when there is nothing to damage). Each
name must carry the plugin's prefix (``my_faults.preempt`` above: the entry point's name, a dot, then the
own name), so two plugins never claim one name and a plan says whose fault it runs. A plugin that fails to
load, or a fault that breaks the contract, is refused in one line naming the entry point and its package.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from fault_injectors.actions import BUILTIN, EFFECTS, NEEDS, FaultAction
from harness.errors import UsageError

#: The entry-point group the harness loads plugins from.
GROUP = "spark_exactly_once_harness"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_FIELDS = ("name", "verb", "doc", "effect", "from_watcher", "needs", "resource", "drawn")
#: A checkpoint nemesis: damages the checkpoint directory it is given, returns what it did in one line.
Nemesis = Callable[[Path], str]


class PluginError(UsageError, ValueError):
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
    _check_name(ep, "action", candidate.name)
    if candidate.effect not in EFFECTS:
        raise PluginError(f"{where}: action {candidate.name}: effect {candidate.effect!r}; known: {EFFECTS}")
    if candidate.from_watcher and candidate.effect not in ("driver", "daemon"):
        raise PluginError(
            f"{where}: action {candidate.name}: from_watcher with effect {candidate.effect!r}; a watcher thread has "
            "no code to fail: only an action that takes the driver or a daemon down may be carried out there"
        )
    if candidate.needs not in NEEDS:
        raise PluginError(f"{where}: action {candidate.name}: needs {candidate.needs!r}; known: {NEEDS}")
    if not candidate.verb or not candidate.doc:
        raise PluginError(f"{where}: action {candidate.name}: give it a verb and a one-sentence doc")
    return candidate


def _check_name(ep: EntryPoint, kind: str, name: object) -> None:
    own = name.partition(".")[2] if isinstance(name, str) else ""
    if not isinstance(name, str) or name.partition(".")[0] != ep.name or not _NAME.match(own):
        raise PluginError(
            f"{_where(ep)}: {kind} name {name!r} must be {ep.name!r}, a dot and a lower-case name "
            f"([a-z][a-z0-9_]*), e.g. '{ep.name}.{own or 'my_' + kind}'"
        )


def _nemeses(ep: EntryPoint, found: object) -> dict[str, Nemesis]:
    if not isinstance(found, Mapping):
        raise PluginError(f"{_where(ep)}: NEMESES must map names to functions of the checkpoint directory")
    out: dict[str, Nemesis] = {}
    for name, fn in found.items():
        _check_name(ep, "nemesis", name)
        if not callable(fn) or not (getattr(fn, "__doc__", None) or "").strip():
            raise PluginError(f"{_where(ep)}: nemesis {name}: give a function with a docstring (its first line)")
        out[name] = fn
    return out


def _load(ep: EntryPoint) -> tuple[list[FaultAction], dict[str, Nemesis]]:
    try:
        loaded = ep.load()
    except Exception as exc:
        raise PluginError(
            f"{_where(ep)} failed to load: {type(exc).__name__}: {exc}; fix it or uninstall its package"
        ) from None
    actions, nemeses = getattr(loaded, "FAULT_ACTIONS", None), getattr(loaded, "NEMESES", None)
    if actions is None and nemeses is None:
        raise PluginError(f"{_where(ep)}: it has no FAULT_ACTIONS (a sequence of fault actions) and no NEMESES")
    if isinstance(actions, str | bytes):
        raise PluginError(f"{_where(ep)}: FAULT_ACTIONS must be a sequence of fault actions")
    return [_checked(ep, a) for a in actions or ()], _nemeses(ep, nemeses) if nemeses is not None else {}


@cache
def _plugins() -> tuple[tuple[FaultAction, ...], tuple[tuple[str, Nemesis], ...]]:
    found: dict[str, FaultAction] = {}
    nemeses: dict[str, Nemesis] = {}
    builtin = {a.name for a in BUILTIN}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.name, e.value)):
        actions, damage = _load(ep)
        for act in actions:
            if act.name in builtin or act.name in found:
                raise PluginError(f"{_where(ep)}: action name {act.name!r} is taken by another action")
            found[act.name] = act
        for name, fn in damage.items():
            if name in nemeses:
                raise PluginError(f"{_where(ep)}: nemesis name {name!r} is taken by another nemesis")
            nemeses[name] = fn
    return tuple(found.values()), tuple(nemeses.items())


def plugin_actions() -> tuple[FaultAction, ...]:
    """The installed plugins' fault actions, by entry-point name, then in each plugin's order (loaded once
    per process). :class:`PluginError` for a plugin that cannot be used or claims a taken name."""
    return _plugins()[0]


def plugin_nemeses() -> dict[str, Nemesis]:
    """The installed plugins' checkpoint nemeses by name, in the same order (:func:`plugin_actions`)."""
    return dict(_plugins()[1])


def forget() -> None:
    """Load the plugins again at the next call (a test that installs one)."""
    _plugins.cache_clear()
