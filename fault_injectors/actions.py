"""Fault actions: what a fault does when it fires, one registered implementation each.

A fault rule names its action (``FaultRule.action``); everything the harness decides about an action
reads it from the action's implementation here, never from its name: what it does (``doc``, ``verb``),
what its firing means for the run (``effect``), where it may be carried out from (``from_watcher``),
what the run needs for it (``needs``, ``resource``), whether campaigns draw it (``drawn``), and how it
is carried out (``execute``). The built-ins are registered below in the order seeds draw them;
installed packages add theirs through an entry point (:mod:`fault_injectors.plugins`); look one up by
name in :mod:`fault_injectors.registry`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from fault_injectors.kills import kill_cluster_daemon, kill_driver_groups, kill_driver_python, kill_executor_jvm
from fault_injectors.servers import kill_server

if TYPE_CHECKING:
    from fault_injectors.plan import FaultRule

#: What firing an action means for the run:
#: ``driver``: the driver's processes die (the runner starts a new driver from the checkpoint);
#: ``firing``: the code that fired fails (a task failure in a task, a query failure on the driver);
#: ``executor``: the executor JVM running the firing task dies (Spark retries the task elsewhere);
#: ``daemon``: a daemon or server of the run dies and is restarted by its owner; the firing code goes on.
Effect = Literal["driver", "firing", "executor", "daemon"]
EFFECTS: tuple[Effect, ...] = ("driver", "firing", "executor", "daemon")
#: What the run must have for the action: ``executors`` apart from the driver (``local-cluster``, a real
#: cluster), the harness's ``standalone`` cluster (``--cluster standalone:W``), or nothing (``""``).
Needs = Literal["", "executors", "standalone"]
NEEDS: tuple[Needs, ...] = ("", "executors", "standalone")


@runtime_checkable
class FaultAction(Protocol):
    """One fault action. ``execute`` runs in the process where the fault fired, after the firing is claimed
    and recorded in the ledger; it may not return (the process died). When it returns, the firing code
    raises :class:`~fault_injectors.kills.InjectedFault` unless ``effect`` is ``daemon``."""

    @property
    def name(self) -> str:
        """The ``action`` of a fault rule: lower case, ``[a-z0-9_]``; a plugin's carries a prefix of its own."""
        ...

    @property
    def verb(self) -> str:
        """How a fault description says it: ``kill``, ``raise``, ``kill broker``."""
        ...

    @property
    def doc(self) -> str:
        """One sentence: what it does to which process."""
        ...

    @property
    def effect(self) -> Effect:
        """What its firing means for the run (:data:`Effect`)."""
        ...

    @property
    def from_watcher(self) -> bool:
        """Whether the checkpoint watcher thread in the driver may carry it out (it has no code to fail)."""
        ...

    @property
    def needs(self) -> Needs:
        """What kind of cluster it needs (:data:`Needs`)."""
        ...

    @property
    def resource(self) -> str | None:
        """The run's resource setting naming the server it takes down (``broker_file``), if any."""
        ...

    @property
    def drawn(self) -> bool:
        """Whether chaos campaigns draw it on their own (where its needs and resource are met)."""
        ...

    def execute(self, rule: FaultRule, batch: int | None, fault_dir: Path | None) -> None:
        """Carry the fault out in this process (``fault_dir``: the run's fault directory)."""
        ...


@dataclass(frozen=True)
class Action:
    """A :class:`FaultAction` made of its fields and a function that carries it out."""

    name: str
    verb: str
    doc: str
    effect: Effect
    run: Callable[[FaultRule, int | None, Path | None], None]
    from_watcher: bool = False
    needs: Needs = ""
    resource: str | None = None
    drawn: bool = False

    def execute(self, rule: FaultRule, batch: int | None, fault_dir: Path | None) -> None:
        self.run(rule, batch, fault_dir)


def _nothing(rule: FaultRule, batch: int | None, fault_dir: Path | None) -> None:
    """``raise``: the caller raises InjectedFault."""


def _exit(rule: FaultRule, batch: int | None, fault_dir: Path | None) -> None:
    os._exit(17)


def _kill_worker(rule: FaultRule, batch: int | None, fault_dir: Path | None) -> None:
    kill_cluster_daemon(rule.action, master=False)


def _kill_master(rule: FaultRule, batch: int | None, fault_dir: Path | None) -> None:
    kill_cluster_daemon(rule.action, master=True)


#: The run's resource setting that says where its Kafka broker is (:mod:`scenarios.kafka.broker`).
BROKER_FILE = "broker_file"


def _kill_broker(rule: FaultRule, batch: int | None, fault_dir: Path | None) -> None:
    kill_server(rule.action, BROKER_FILE, fault_dir)


KILL = Action(
    "kill_process_group", "kill", "SIGKILL the driver's process group (and the firing process's own group)",
    "driver", lambda rule, batch, fault_dir: kill_driver_groups(), from_watcher=True,
)  # fmt: skip
RAISE = Action(
    "raise", "raise",
    "raise InjectedFault in the firing code (a task failure or a query failure, by where it fires)",
    "firing", _nothing,
)  # fmt: skip
EXIT = Action(
    "exit", "exit", "os._exit(17) of the firing process (a Python worker or driver dying without cleanup)",
    "firing", _exit,
)  # fmt: skip
KILL_EXECUTOR = Action(
    "kill_executor", "kill executor",
    "SIGKILL the executor JVM that runs the firing task (local-cluster / real clusters only)",
    "executor", lambda rule, batch, fault_dir: kill_executor_jvm(), needs="executors",
)  # fmt: skip
KILL_WORKER = Action(
    "kill_worker", "kill worker",
    "SIGKILL a standalone worker daemon and its executors (the one running the firing task, else the first); "
    "--cluster standalone:W only, whose supervisor restarts it",
    "daemon", _kill_worker, needs="standalone", drawn=True,
)  # fmt: skip
KILL_MASTER = Action(
    "kill_master", "kill master",
    "SIGKILL the standalone master (--cluster standalone:W only, whose supervisor restarts it)",
    "daemon", _kill_master, needs="standalone", drawn=True,
)  # fmt: skip
KILL_BROKER = Action(
    "kill_broker", "kill broker",
    "SIGKILL the run's Kafka broker (a Kafka scenario's broker the harness started, whose supervisor restarts it "
    "on the same ports and data after a short delay); the query runs on",
    "daemon", _kill_broker, from_watcher=True, resource=BROKER_FILE, drawn=True,
)  # fmt: skip

KILL_PYTHON = Action(
    "kill_python", "kill python",
    "SIGKILL the driver's Python process alone where the pool hosts Spark's JVM apart (check-sink's step kills of "
    "a foreachBatch function): the JVM lives on, the next driver process attaches to it; elsewhere as "
    "kill_process_group",
    "driver", lambda rule, batch, fault_dir: kill_driver_python(),
)  # fmt: skip

#: The built-in actions, in the order campaigns draw among them (reordering changes what a seed draws);
#: a new one goes last.
BUILTIN: tuple[FaultAction, ...] = (
    KILL, RAISE, EXIT, KILL_EXECUTOR, KILL_WORKER, KILL_MASTER, KILL_BROKER, KILL_PYTHON,
)  # fmt: skip
#: The action of a fault rule that names none.
DEFAULT = KILL.name
