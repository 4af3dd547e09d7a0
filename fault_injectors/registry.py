"""Fault actions by name: the built-ins (:mod:`fault_injectors.actions`) and the installed plugins'
(:mod:`fault_injectors.plugins`), and what the harness asks of an action wherever it decides by one.
"""

from __future__ import annotations

from fault_injectors.actions import BUILTIN, FaultAction, Needs
from fault_injectors.plugins import plugin_actions
from harness.errors import UsageError


class UnknownActionError(UsageError, ValueError):
    """No built-in or installed action has that name; the message lists the known ones."""


def registered() -> dict[str, FaultAction]:
    """Every action by name: the built-ins, then the installed plugins' in their load order."""
    return {**{a.name: a for a in BUILTIN}, **{a.name: a for a in plugin_actions()}}


def action(name: str) -> FaultAction:
    """The action called ``name``; :class:`UnknownActionError` naming the known ones. A built-in name is
    found without loading plugins (a Python worker validates its plan with every fault it may fire)."""
    for builtin in BUILTIN:
        if builtin.name == name:
            return builtin
    known = registered()
    if name not in known:
        raise UnknownActionError(f"{name!r} is no fault action; known: {', '.join(known)}")
    return known[name]


def verb(name: str) -> str:
    """How a fault description says the action (its name when no installed action has it: a history
    recorded with a plugin this process lacks)."""
    try:
        return action(name).verb
    except UnknownActionError:
        return name


def kills_driver(name: str) -> bool:
    """Whether the action takes the driver's processes down (a new driver starts from the checkpoint)."""
    return action(name).effect == "driver"


def watcher_kill(name: str) -> bool:
    """Whether the checkpoint watcher may fire the action at a point it alone sees (a state file, a timed
    kill, a sink's commit seen in its output): it takes the driver down and can be carried out from there."""
    chosen = action(name)
    return chosen.from_watcher and chosen.effect == "driver"


def crashes(name: str) -> bool:
    """Whether Spark restarts the query (or retries the task) from what it wrote after the action: a process
    died or raised. A daemon's death is not a crash: the query runs on."""
    return action(name).effect != "daemon"


def history_kind(name: str) -> str:
    """The history's name for a firing: ``fault`` when the firing code failed, ``kill`` when a process died."""
    return "fault" if action(name).effect == "firing" else "kill"


def plugin_drawn(*, watcher: bool) -> tuple[str, ...]:
    """The installed plugins' actions a campaign draws at a named point, in load order: those that need no
    cluster and no server (``watcher``: the point is one only a watcher reaches, so the action must be one
    every watcher carries out: :func:`watcher_kill`)."""
    return tuple(
        a.name
        for a in plugin_actions()
        if a.drawn and a.needs == "" and a.resource is None and (watcher_kill(a.name) or not watcher)
    )


def needing(needs: Needs) -> tuple[str, ...]:
    """The drawn actions that need ``needs``, in registration order."""
    return tuple(a.name for a in registered().values() if a.drawn and a.needs == needs and a.resource is None)
