"""``sink.commit.after`` for a sink that commits inside the driver's JVM, where no harness code runs.

Spark's Kafka and Delta sinks commit batch N in the JVM and Spark writes ``commits/N`` right after; no Python
hook and no checkpoint file marks the moment between. A :class:`SlicedCommitWatcher` (a thread in the driver,
started by a scenario's ``attach_sink`` when a ``sink.commit.after`` SIGKILL is planned) reaches it:

- it waits for the run's checkpoint (a new query creates it after ``attach_sink`` ran) and for ``offsets/N``;
- from then on it stops the driver's JVM (SIGSTOP) and lets it run in slices of :data:`SLICE_S`, looking at the
  sink's output between slices, while the JVM stands still (:meth:`SlicedCommitWatcher.look`);
- once the output shows batch N committed (:meth:`SlicedCommitWatcher.committed`) it fires the rule (a SIGKILL
  of the driver's process groups) with the JVM still stopped. The ledger's ``commit_logged`` says whether
  ``commits/N`` was there all the same.

Only SIGKILL rules with an explicit batch are carried out, and only for a batch whose ``commits/N`` did not
exist when the watcher first looked; a batch not committed within :data:`FREEZE_LIMIT_S` of slicing is given up
(the rule never fires and the run says so). The watcher ends when no such rule is left, when the run's
checkpoint is gone, or when the driver has moved on to another run (a pool driver: ``HARNESS_RUN_OUTPUT``
names another output). Subclasses: :mod:`scenarios.kafka.commit_watch` (the records of batch N read back from
the topic), :mod:`scenarios.delta.commit_watch` (a ``txn`` of batch N in the table's log).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

from fault_injectors.crash import FaultSite
from fault_injectors.registry import watcher_kill

POINT = "sink.commit.after"
#: How long the stopped JVM runs between two looks at the output.
SLICE_S = 0.0005
#: Slicing a batch longer than this gives it up.
FREEZE_LIMIT_S = 120.0
#: Set by the harness in a driver: the running query's output directory (``scenarios.base.RUN_OUTPUT_ENV``).
_RUN_OUTPUT_ENV = "HARNESS_RUN_OUTPUT"


class SlicedCommitWatcher(threading.Thread):
    """Fires :data:`POINT` of batch N once :meth:`committed` says the sink's output holds batch N (module
    docstring). Subclasses implement :meth:`look` and :meth:`committed`; :meth:`ready`, :meth:`close` and
    :data:`via` are theirs to change."""

    #: Named in the fired fault's context (``via``).
    via = "commit-watcher"
    #: Give a batch up when ``commits/N`` appears while slicing. ``False`` where the output is read back late
    #: (records acknowledged to Spark before a consumer sees them): the kill still lands, after ``commits/N``,
    #: and the ledger's ``commit_logged`` says so.
    give_up_once_committed = True

    def __init__(self, site: FaultSite, checkpoint: str, output: str, name: str) -> None:
        super().__init__(name=name, daemon=True)
        self.site, self.checkpoint, self.output = site, Path(checkpoint), output
        self.frozen: list[int] = []
        #: Batches this watcher will not fire for (committed before it looked, or given up).
        self.skipped: set[int] = set()
        self._halt = threading.Event()

    # -- what a subclass says about its sink's output ---------------------------------------------------------
    def look(self, slicing: bool) -> None:
        """Read what the sink's output gained since the last look; ``slicing``: the JVM is stopped (be quick),
        else wait a little (the watcher's idle pace)."""
        raise NotImplementedError

    def committed(self, batch: int) -> dict[str, Any] | None:
        """The fired fault's context once the output holds all of batch ``batch``, else ``None``."""
        raise NotImplementedError

    def ready(self, batch: int) -> bool:
        """Whether batch ``batch`` can be watched now that ``offsets/<batch>`` is logged."""
        return True

    def close(self) -> None:
        """Release what :meth:`look` holds (the watcher has ended)."""

    # -- the loop -----------------------------------------------------------------------------------------------
    def _targets(self) -> list[int]:
        rules = [r for r in self.site.armed_at(POINT) if r.batch is not None and watcher_kill(r.action)]
        return sorted({r.batch for r in rules if r.batch is not None} - self.skipped)

    def _logged(self, log: str, batch: int) -> bool:
        return (self.checkpoint / log / str(batch)).exists()

    def _this_run(self) -> bool:
        return os.environ.get(_RUN_OUTPUT_ENV, self.output) == self.output

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        from harness.spark.procs import signal_all

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
                if not self._logged("offsets", batch) or not self.ready(batch):
                    self.look(slicing=False)
                    continue
                self._slice_until_committed(batch)
        finally:
            signal_all(self.frozen, signal.SIGCONT)
            self.close()

    def _slice_until_committed(self, batch: int) -> None:
        """Stop the JVM; let it run in slices until :meth:`committed`; then fire (JVM stopped)."""
        from harness.spark.procs import child_jvm_pids, signal_all

        self.frozen = child_jvm_pids()
        signal_all(self.frozen, signal.SIGSTOP)
        deadline = time.monotonic() + FREEZE_LIMIT_S
        try:
            while not self._halt.is_set():
                self.look(slicing=True)  # with the JVM stopped: nothing new can be committed meanwhile
                context = self.committed(batch)
                if context is not None:
                    self.site.maybe_fire(POINT, batch, via=self.via, **context)
                    return  # not reached for a SIGKILL; another watcher's claim got there first otherwise
                late = self.give_up_once_committed and self._logged("commits", batch)
                if time.monotonic() > deadline or late:
                    self.skipped.add(batch)
                    return
                signal_all(self.frozen, signal.SIGCONT)
                time.sleep(SLICE_S)
                signal_all(self.frozen, signal.SIGSTOP)
        finally:
            signal_all(self.frozen, signal.SIGCONT)
            self.frozen = []


_watchers: dict[str, SlicedCommitWatcher] = {}


def start_once(site: FaultSite, make: Any) -> None:
    """Start ``make()`` (a :class:`SlicedCommitWatcher`) in this driver for the run of ``site`` when a
    :data:`POINT` rule is armed and none is watching yet (one per run directory and driver; a new query of the
    same run reuses it)."""
    if site.dir is None or not site.armed_at(POINT):
        return
    key = str(site.dir)
    alive = _watchers.get(key)
    if alive is not None and alive.is_alive():
        return
    _watchers[key] = make()
    _watchers[key].start()
