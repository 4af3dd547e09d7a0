"""A checkpoint watcher: fires crash points that live inside Spark's JVM.

``after_offsets_logged`` (``offsets/N`` appeared), ``after_commit_logged``
(``commits/N`` appeared) and ``sink.commit.after`` for the file sink
(``<output>/_spark_metadata/N`` appeared) are reached by polling the
directories every ``interval_s`` from a daemon thread in the driver process.
Only files that appear after the watcher started count, only rules with an
explicit batch are watched, and only the ``kill_process_group`` action is
carried out from here (raising in a watcher thread would affect nothing).
Precision: within one poll interval (~5 ms) of the file's rename into place,
which for ``sink.commit.after`` on the file sink can lose the race with
Spark writing ``commits/N``; the ledger records whether it did.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from fault_injectors.crash import FaultSite
from harness.inspector.checkpoint import batch_ids

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
        self._halt = threading.Event()

    def needed(self) -> bool:
        """Whether any armed rule is one this watcher can fire."""
        return any(self._rules(point) for point in self.dirs)

    def _rules(self, point: str) -> list[int]:
        return [r.batch for r in self.site.armed_at(point) if r.batch is not None and r.action == "kill_process_group"]

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

    def stop(self) -> None:
        self._halt.set()
