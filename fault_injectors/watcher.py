"""A checkpoint watcher: fires crash points that live inside Spark's JVM.

``after_offsets_logged`` (``offsets/N`` appeared), ``after_commit_logged``
(``commits/N`` appeared) and ``sink.commit.after`` for the file sink
(``<output>/_spark_metadata/N`` appeared) are reached by polling the
directories every ``interval_s`` from a daemon thread in the driver process.
Only files that appear after the watcher started count, only rules with an
explicit batch are watched, and only actions that may be carried out from
here (``from_watcher``: ``kill_process_group``, ``kill_broker``) are: raising
in a watcher thread would affect nothing.
Precision: within one poll interval (~5 ms) of the file's rename into place,
which for ``sink.commit.after`` on the file sink can lose the race with
Spark writing ``commits/N``; the ledger records whether it did.

Maintenance moments (``state.snapshot``, ``state.purge``) are seen in ``<checkpoint>/state/``, polled every
fourth interval (a state tree has hundreds of files): a full copy of version N+1 appearing, or the first versioned
state file deleted once ``commits/N`` exists. The ledger names the file.

Timed kills (``batch.time``, ``after_ms``) are fired from here too: the
watcher notes when ``offsets/N`` was written (its modification time) and
kills ``after_ms`` later, within one poll interval. The
ledger records where the kill landed: ``measured_ms`` after the file's
modification time, and the newest ``offsets``/``commits`` ids at that moment.
The listener cannot time a batch's start (it reports a batch when it ends, and
a killed batch never ends), so the start is the write of ``offsets/N``, the
first durable trace of batch N; a batch that Spark re-runs from an existing
``offsets/N`` after a restart does not start the clock again.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from fault_injectors.crash import FaultSite
from fault_injectors.plan import PURGE_POINT, SNAPSHOT_POINT, TIMED_POINT
from fault_injectors.registry import action
from harness.inspector.checkpoint import batch_ids
from harness.inspector.state import FULL_KINDS, STATE_FILE_NAME

WATCHED_POINTS = ("after_offsets_logged", "after_commit_logged", "sink.commit.after")


class CheckpointWatcher(threading.Thread):
    def __init__(
        self,
        site: FaultSite,
        checkpoint: str | os.PathLike[str],
        sink_output: str | os.PathLike[str] | None = None,
        interval_s: float = 0.005,
    ) -> None:
        super().__init__(name="harness-checkpoint-watcher", daemon=True)
        self.site = site
        self.interval_s = interval_s
        ckpt = Path(checkpoint)
        self.dirs = {
            "after_offsets_logged": ckpt / "offsets",
            "after_commit_logged": ckpt / "commits",
        }
        if sink_output is not None:
            self.dirs["sink.commit.after"] = Path(sink_output) / "_spark_metadata"
        self.initial = {point: set(batch_ids(d)) for point, d in self.dirs.items()}
        self.state_dir = ckpt / "state"
        self.state_files = self._state_files() if self._state_rules() else set()
        self._committed: int | None = max(batch_ids(self.dirs["after_commit_logged"]), default=None)
        self._ticks = 0
        #: Batch id -> modification time (ns since the epoch) of an ``offsets/N`` that appeared while watching.
        self.started: dict[int, int] = {}
        self._halt = threading.Event()

    def needed(self) -> bool:
        """Whether any armed rule is one this watcher can fire."""
        return any(self._rules(point) for point in self.dirs) or bool(self._timed()) or self._state_rules()

    def _timed(self) -> dict[int, int]:
        """Armed timed kills: batch id -> ``after_ms``."""
        return {
            r.batch: r.after_ms
            for r in self.site.armed_at(TIMED_POINT)
            if r.batch is not None and r.after_ms is not None
        }

    def _rules(self, point: str) -> list[int]:
        return [r.batch for r in self.site.armed_at(point) if r.batch is not None and action(r.action).from_watcher]

    def run(self) -> None:
        while not self._halt.wait(self.interval_s):
            for point, directory in self.dirs.items():
                wanted = self._rules(point)
                if not wanted:
                    continue
                appeared = set(batch_ids(directory)) - self.initial[point]
                for batch in wanted:
                    if batch in appeared:
                        self.site.maybe_fire(point, batch, via="checkpoint-watcher")
            self._tick_timed()
            self._ticks += 1
            if self._ticks % 4 == 0 and self._state_rules():
                self._tick_state()

    def _state_rules(self) -> bool:
        return bool(self._rules(SNAPSHOT_POINT) or self._rules(PURGE_POINT))

    def _state_files(self) -> set[Path]:
        """Versioned state files under ``state/`` (``.delta``, ``.snapshot``, ``.zip``, ``.changelog``)."""
        try:
            return {p for p in self.state_dir.rglob("*") if STATE_FILE_NAME.match(p.name)}
        except OSError:  # a directory renamed or deleted while walking: seen again next poll
            return set(getattr(self, "state_files", set()))

    def _tick_state(self) -> None:
        now = self._state_files()
        appeared, vanished = now - self.state_files, self.state_files - now
        self.state_files = now
        for path in sorted(appeared):
            m = STATE_FILE_NAME.match(path.name)
            batch = int(m.group(1)) - 1 if m and m.group(3) in FULL_KINDS else None  # version N+1: batch N's
            if batch is not None and batch in self._rules(SNAPSHOT_POINT):
                where = path.relative_to(self.state_dir.parent)
                self.site.maybe_fire(SNAPSHOT_POINT, batch, via="checkpoint-watcher", description=f"{where} appeared")
        # The newest commit as of the previous poll: a file deleted since then was deleted after that commit.
        committed, self._committed = self._committed, max(batch_ids(self.dirs["after_commit_logged"]), default=None)
        if vanished and committed is not None:
            where = sorted(vanished)[0].relative_to(self.state_dir.parent)
            for batch in self._rules(PURGE_POINT):
                if batch <= committed:
                    desc = f"{where} deleted ({len(vanished)} state file(s) gone) after commits/{committed}"
                    self.site.maybe_fire(
                        PURGE_POINT,
                        batch,
                        recorded_batch=committed + 1,  # it lands in the batch after that commit, not in `batch`
                        via="checkpoint-watcher",
                        description=desc,
                        after_commit=committed,
                    )

    def _tick_timed(self) -> None:
        timed = self._timed()
        if not timed:
            return
        offsets = self.dirs["after_offsets_logged"]
        for batch in set(batch_ids(offsets)) - self.initial["after_offsets_logged"] - set(self.started):
            try:
                self.started[batch] = (offsets / str(batch)).stat().st_mtime_ns
            except FileNotFoundError:  # renamed away between listing and stat: seen again next poll
                continue
        now = time.time_ns()
        for batch, after_ms in timed.items():
            if batch not in self.started or now - self.started[batch] < after_ms * 1_000_000:
                continue
            self.site.maybe_fire(TIMED_POINT, batch, via="timer", **self._landing(batch, after_ms))

    def _landing(self, batch: int, after_ms: int) -> dict[str, Any]:
        """Where a timed kill of ``batch`` lands, for the ledger."""
        measured = (time.time_ns() - self.started[batch]) / 1e6
        latest_offsets = max(batch_ids(self.dirs["after_offsets_logged"]), default=None)
        latest_commit = max(batch_ids(self.dirs["after_commit_logged"]), default=None)
        if latest_commit is None or latest_commit < batch:
            where = f"batch {batch} not committed yet"
        elif latest_offsets is not None and latest_offsets > latest_commit:
            where = f"batch {batch} had committed; batch {latest_offsets} was running"
        else:
            where = f"batch {batch} had committed; no batch was running"
        recorded = round(measured, 1)
        return {
            "planned_ms": after_ms,
            "measured_ms": recorded,
            "latest_offsets": latest_offsets,
            "latest_commit": latest_commit,
            # From the recorded figure, so the text and measured_ms round alike (154.54 was "155" beside 154.5).
            "description": f"landed {round(recorded)} ms after offsets/{batch} was written ({where})",
        }

    def stop(self) -> None:
        self._halt.set()
