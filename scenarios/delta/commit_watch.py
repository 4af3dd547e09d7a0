"""``sink.commit.after`` for Spark's Delta streaming sink: a kill after Delta committed batch N and before Spark
writes ``commits/N``.

Spark's Delta sink commits batch N in the driver's JVM (``DeltaSink.addBatch``: the batch's files and a ``txn``
action ``(queryId, N)`` in one Delta commit, then Spark writes ``commits/N``); no harness code runs in that
window and the checkpoint watcher sees no file of the sink's. :class:`DeltaCommitWatcher`, a thread in the
driver started by the scenario's ``attach_sink`` (:func:`watch_delta_commits`) when such a kill is planned,
reaches it: from the moment ``offsets/N`` is logged it stops the driver's JVM (SIGSTOP) and lets it run in
slices of :data:`SLICE_S`, reading the new commit files of ``<table>/_delta_log`` between slices (while the JVM
stands still); once a commit holds a ``txn`` of version N it fires the rule (a SIGKILL of the driver's process
groups) with the JVM still stopped. The ledger's ``commit_logged`` says whether ``commits/N`` was there all the
same. Only SIGKILL rules with an explicit batch are carried out, and only for a batch whose ``commits/N`` did
not exist when the watcher first looked; a batch not committed within :data:`FREEZE_LIMIT_S` of slicing is
given up (the rule never fires and the run says so). The watcher ends when no such rule is left, when the
run's checkpoint is gone, or when its driver has moved on to another run. The same design as the Kafka sink's
(:mod:`scenarios.kafka.commit_watch`).
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

from fault_injectors.crash import FaultSite
from harness.spark.procs import child_jvm_pids, signal_all
from scenarios.base import RUN_OUTPUT_ENV, SinkContext
from scenarios.delta.log import LOG_DIR, DeltaLogError, read_commit
from scenarios.delta.sinks import table_path

POINT = "sink.commit.after"
#: How long the stopped JVM runs between two looks at the Delta log.
SLICE_S = 0.0005
#: Slicing a batch longer than this gives it up.
FREEZE_LIMIT_S = 120.0
_COMMIT_FILE = re.compile(r"^(\d{20})\.json$")


class DeltaCommitWatcher(threading.Thread):
    """Fires :data:`POINT` of batch N once a commit of ``table``'s Delta log holds a ``txn`` of version N, with the
    driver's JVM stopped from the moment ``offsets/N`` is logged (module docstring)."""

    def __init__(self, site: FaultSite, checkpoint: str, output: str, table: str) -> None:
        super().__init__(name="harness-delta-commit-watcher", daemon=True)
        self.site, self.checkpoint, self.output = site, Path(checkpoint), output
        self.log = Path(table) / LOG_DIR
        #: Batch ids a ``txn`` action of the log names, and the Delta version that holds each.
        self.txns: dict[int, int] = {}
        self._read: set[str] = set()
        self.frozen: list[int] = []
        #: Batches this watcher will not fire for (committed before it looked, or given up).
        self.skipped: set[int] = set()
        self._halt = threading.Event()

    def _targets(self) -> list[int]:
        rules = [r for r in self.site.armed_at(POINT) if r.batch is not None and r.action == "kill_process_group"]
        return sorted({r.batch for r in rules if r.batch is not None} - self.skipped)

    def _logged(self, log: str, batch: int) -> bool:
        return (self.checkpoint / log / str(batch)).exists()

    def _this_run(self) -> bool:
        return os.environ.get(RUN_OUTPUT_ENV, self.output) == self.output

    def look(self) -> None:
        """Read the commit files that appeared since the last look (a commit file is complete once visible: Delta
        writes it under a temporary name and renames it into place) and note the batch ids of their ``txn``s."""
        try:
            names = [n for n in os.listdir(self.log) if n not in self._read and _COMMIT_FILE.match(n)]
        except FileNotFoundError:
            return
        for name in sorted(names):
            try:
                commit = read_commit(self.log / name, int(name[:20]))
            except DeltaLogError:
                continue  # not readable yet: looked at again next time
            self._read.add(name)
            for _app, batch in commit.txns:
                self.txns.setdefault(batch, commit.version)

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        started = False  # a new query creates its checkpoint after attach_sink ran: wait for it, end once gone
        try:
            while not self._halt.is_set() and self._this_run():
                if not self.checkpoint.exists():
                    if started:
                        return
                    time.sleep(0.002)
                    continue
                started = True
                targets = self._targets()
                if not targets:
                    return
                batch = targets[0]
                if self._logged("commits", batch):
                    self.skipped.add(batch)  # committed before this watcher could stop the JVM in time
                    continue
                if not self._logged("offsets", batch):
                    self.look()
                    time.sleep(0.002)
                    continue
                self._slice_until_committed(batch)
        finally:
            signal_all(self.frozen, signal.SIGCONT)

    def _slice_until_committed(self, batch: int) -> None:
        """Stop the JVM; let it run in slices until the log holds batch ``batch``'s txn; then fire (JVM stopped)."""
        self.frozen = child_jvm_pids()
        signal_all(self.frozen, signal.SIGSTOP)
        deadline = time.monotonic() + FREEZE_LIMIT_S
        try:
            while not self._halt.is_set():
                self.look()  # with the JVM stopped: nothing new can be committed meanwhile
                if batch in self.txns:
                    self.site.maybe_fire(POINT, batch, via="delta-commit-watcher", delta_version=self.txns[batch])
                    return  # not reached for a SIGKILL; another watcher's claim got there first otherwise
                if time.monotonic() > deadline or self._logged("commits", batch):
                    self.skipped.add(batch)
                    return
                signal_all(self.frozen, signal.SIGCONT)
                time.sleep(SLICE_S)
                signal_all(self.frozen, signal.SIGSTOP)
        finally:
            signal_all(self.frozen, signal.SIGCONT)
            self.frozen = []


_watchers: dict[str, DeltaCommitWatcher] = {}


def watch_delta_commits(ctx: SinkContext) -> None:
    """Start a :class:`DeltaCommitWatcher` in this driver for the run of ``ctx`` when a :data:`POINT` rule is armed
    and none is watching yet (one per run and driver; a new query of the same run reuses it)."""
    site = FaultSite(ctx.faults.dir, ctx.checkpoint)
    if site.dir is None or not site.armed_at(POINT):
        return
    key = str(site.dir)
    alive = _watchers.get(key)
    if alive is not None and alive.is_alive():
        return
    _watchers[key] = DeltaCommitWatcher(site, ctx.checkpoint, ctx.output, table_path(ctx))
    _watchers[key].start()
