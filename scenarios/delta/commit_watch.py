"""``sink.commit.after`` for Spark's Delta streaming sink: a kill after Delta committed batch N and before Spark
writes ``commits/N``.

Spark's Delta sink commits batch N in the driver's JVM (``DeltaSink.addBatch``: the batch's files and a ``txn``
action ``(queryId, N)`` in one Delta commit, then Spark writes ``commits/N``); no harness code runs in that
window and the checkpoint watcher sees no file of the sink's. :class:`DeltaCommitWatcher`, a thread in the
driver started by the scenario's ``attach_sink`` (:func:`watch_delta_commits`) when such a kill is planned,
reaches it the way :mod:`fault_injectors.sliced_commit` says (the driver's JVM stopped from ``offsets/N`` on and
run in slices): between slices it reads the new commit files of ``<table>/_delta_log``, and once a commit holds
a ``txn`` of version N it fires the rule with the JVM still stopped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from fault_injectors.crash import FaultSite
from fault_injectors.sliced_commit import POINT, SlicedCommitWatcher, start_once
from scenarios.base import SinkContext
from scenarios.delta.log import LOG_DIR, DeltaLogError, read_commit
from scenarios.delta.sinks import table_path

__all__ = ["POINT", "DeltaCommitWatcher", "watch_delta_commits"]

_COMMIT_FILE = re.compile(r"^(\d{20})\.json$")


class DeltaCommitWatcher(SlicedCommitWatcher):
    """Fires :data:`POINT` of batch N once a commit of ``table``'s Delta log holds a ``txn`` of version N."""

    via = "delta-commit-watcher"

    def __init__(self, site: FaultSite, checkpoint: str, output: str, table: str) -> None:
        super().__init__(site, checkpoint, output, "harness-delta-commit-watcher")
        self.log = Path(table) / LOG_DIR
        #: Batch ids a ``txn`` action of the log names, and the Delta version that holds each.
        self.txns: dict[int, int] = {}
        self._read: set[str] = set()

    def look(self, slicing: bool = True) -> None:
        """Read the commit files that appeared since the last look (a commit file is complete once visible: Delta
        writes it under a temporary name and renames it into place) and note the batch ids of their ``txn``s."""
        import time

        try:
            names = [n for n in os.listdir(self.log) if n not in self._read and _COMMIT_FILE.match(n)]
        except FileNotFoundError:
            names = []
        for name in sorted(names):
            try:
                commit = read_commit(self.log / name, int(name[:20]))
            except DeltaLogError:
                continue  # not readable yet: looked at again next time
            self._read.add(name)
            for _app, batch in commit.txns:
                self.txns.setdefault(batch, commit.version)
        if not slicing:
            time.sleep(0.002)

    def committed(self, batch: int) -> dict[str, Any] | None:
        return {"delta_version": self.txns[batch]} if batch in self.txns else None


def watch_delta_commits(ctx: SinkContext) -> None:
    """Start a :class:`DeltaCommitWatcher` in this driver for the run of ``ctx`` when a :data:`POINT` rule is armed
    and none is watching yet (one per run and driver; a new query of the same run reuses it)."""
    site = FaultSite(ctx.faults.dir, ctx.checkpoint)
    start_once(site, lambda: DeltaCommitWatcher(site, ctx.checkpoint, ctx.output, table_path(ctx)))
