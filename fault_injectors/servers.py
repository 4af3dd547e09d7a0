"""Faults that take down a server of the run's resources: ``kill_broker`` SIGKILLs a Kafka scenario's broker.

The run's resource hook is entered by the runner before any driver starts; its settings are in
``resources.json`` of the run directory, beside the fault directory. Each action names the setting that says
where its server is (its ``resource``, :mod:`fault_injectors.actions`): for ``kill_broker``, ``broker_file``, the
JSON file the broker rewrites on every (re)start with its ``pid``, the leader of a process group of its own
(:mod:`scenarios.kafka.broker`). The action SIGKILLs that group and returns: the query runs on, and the
process that owns the broker (the runner, a campaign, a pytest module) restarts it on the same ports and data
after a short delay (:mod:`scenarios.kafka.supervisor`), as a service manager would.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

from harness.errors import HarnessFailure

#: The run's resource settings, in the run directory (the fault directory's parent).
RESOURCES_FILE = "resources.json"


class ServerFaultError(HarnessFailure, RuntimeError):
    """The run has no server of that kind to take down (the message says what it needs)."""


def run_resources(fault_dir: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The settings of the run whose fault directory is ``fault_dir`` (``{}`` when it has none)."""
    if fault_dir is None:
        return {}
    path = Path(fault_dir).parent / RESOURCES_FILE
    try:
        settings = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return settings if isinstance(settings, dict) else {}


def kill_server(action: str, key: str, fault_dir: str | os.PathLike[str] | None) -> int:
    """SIGKILL the process group of the server ``action`` takes down, named by the run's resource setting
    ``key``; its pid (0 when it was already gone, e.g. killed by another rule and not restarted yet).
    :class:`ServerFaultError` when the run has none."""
    where = run_resources(fault_dir).get(key)
    if not where:
        raise ServerFaultError(
            f"{action} fired in a run without a server the harness started and supervises (no {key!r} among the "
            "run's resources): it needs a Kafka scenario whose broker the harness runs, not one given with --kafka"
        )
    try:
        pid = int(json.loads(Path(where).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ServerFaultError(f"{action}: cannot read the server's pid from {where} ({exc})") from None
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return 0
    return pid
