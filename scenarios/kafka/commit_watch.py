"""``sink.commit.after`` for Spark's Kafka sink: a kill once every record of batch N is in the output topic and
before Spark writes ``commits/N``.

Spark's Kafka sink has no commit of its own: each write task sends its records and flushes its producer when
the task commits, the driver-side commit of the batch does nothing, then Spark writes ``commits/N``. So "the
sink has committed batch N" means: every record batch N writes is readable in the topic. Nothing of the
harness runs in that window (no Python sink code, no file the checkpoint watcher could see), so a thread in
the driver (:class:`TopicCommitWatcher`, started by the scenario's ``attach_sink``) finds it:

- it knows which records batch N must write: ``expected(N)`` gives their identities once ``offsets/N`` is
  logged (the scenario computes them from the input range of batch N), ``identify(value)`` gives the identity
  of a record read back;
- it reads the topic from its beginning with a consumer of its own (``read_uncommitted``: what any reader
  sees first) and collects the identities of batch N's records;
- Spark writes ``commits/N`` soon after the last record is acknowledged, often before a consumer has read
  that record (measured: without the stop below, 2 of 3 runs of ``kafka_sink --kill sink.commit.after:1`` had
  ``commits/1`` written first). So from the moment ``offsets/N`` appears the driver's JVM is stopped
  (SIGSTOP) and let run in slices of :data:`SLICE_S` (as the console sink's watcher of
  ``harness.conformance.certify`` does), and the topic is read between slices, while the JVM stands still;
- when every expected identity has been read, the rule fires (a SIGKILL of the driver's process groups) with
  the JVM still stopped. The ledger's ``commit_logged`` says whether ``commits/N`` was there all the same.

Only SIGKILL rules with an explicit batch are carried out, and only for a batch whose ``commits/N`` did not
exist when the watcher first saw it. A record identity read once counts, whichever attempt wrote it. A batch
whose records are not all in the topic within :data:`FREEZE_LIMIT_S` of slicing is given up (the JVM runs
freely again; the rule never fires and the run reports it). The watcher ends when no such rule is left, when
the run's checkpoint is gone, or when the driver has moved on to another run (a pool driver:
:data:`scenarios.base.RUN_OUTPUT_ENV` names another output).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from fault_injectors.crash import FaultSite
from harness.spark.procs import child_jvm_pids, signal_all
from scenarios.base import RUN_OUTPUT_ENV

POINT = "sink.commit.after"
#: How long the stopped JVM runs between two looks at the topic.
SLICE_S = 0.0005
#: How long one look at the topic waits for records the consumer has not fetched yet.
LOOK_S = 0.003
#: Slicing a batch longer than this gives it up.
FREEZE_LIMIT_S = 120.0

_QUIET = logging.getLogger("scenarios.kafka.commit_watch.librdkafka")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


class TopicCommitWatcher(threading.Thread):
    """Fires :data:`POINT` of batch N once ``expected(N)`` have all been read from ``topic`` (module docstring).
    ``expected(N)`` is ``None`` until ``offsets/N`` is logged."""

    def __init__(
        self,
        site: FaultSite,
        checkpoint: str,
        output: str,
        bootstrap: str,
        topic: str,
        expected: Callable[[int], set[Hashable] | None],
        identify: Callable[[bytes | None], Hashable | None],
    ) -> None:
        super().__init__(name="harness-kafka-commit-watcher", daemon=True)
        self.site, self.checkpoint, self.output = site, Path(checkpoint), output
        self.bootstrap, self.topic = bootstrap, topic
        self.expected, self.identify = expected, identify
        self.seen: set[Hashable] = set()
        self.frozen: list[int] = []
        #: Batches this watcher will not fire for (committed before it looked, or given up).
        self.skipped: set[int] = set()
        self._halt = threading.Event()

    def _targets(self) -> list[int]:
        rules = [r for r in self.site.armed_at(POINT) if r.batch is not None and r.action == "kill_process_group"]
        return sorted({r.batch for r in rules if r.batch is not None} - self.skipped)

    def _logged(self, log: str, batch: int) -> bool:
        return (self.checkpoint / log / str(batch)).exists()

    def _consumer(self) -> Any:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": f"harness-commit-watch-{uuid.uuid4().hex}",  # assign() only: never joined
                "enable.auto.commit": False,
                "isolation.level": "read_uncommitted",
                "fetch.wait.max.ms": 2,
                "logger": _QUIET,
            }
        )
        meta = consumer.list_topics(self.topic, timeout=10.0).topics.get(self.topic)
        parts = sorted(meta.partitions) if meta is not None and meta.partitions else [0]
        consumer.assign([TopicPartition(self.topic, p, OFFSET_BEGINNING) for p in parts])
        return consumer

    def _look(self, consumer: Any, wait_s: float) -> None:
        for msg in consumer.consume(1000, timeout=wait_s):
            if msg.error() is None:
                ident = self.identify(msg.value())
                if ident is not None:
                    self.seen.add(ident)

    def _this_run(self) -> bool:
        return os.environ.get(RUN_OUTPUT_ENV, self.output) == self.output

    def stop(self) -> None:
        self._halt.set()

    def run(self) -> None:
        consumer = self._consumer()
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
                want = self.expected(batch) if self._logged("offsets", batch) else None
                if want is None:
                    self._look(consumer, 0.005)
                    continue
                self._slice_until_written(consumer, batch, want)
        finally:
            signal_all(self.frozen, signal.SIGCONT)
            consumer.close()

    def _slice_until_written(self, consumer: Any, batch: int, want: set[Hashable]) -> None:
        """Stop the JVM; let it run in slices until ``want`` has been read; then fire (JVM stopped)."""
        self.frozen = child_jvm_pids()
        signal_all(self.frozen, signal.SIGSTOP)
        deadline = time.monotonic() + FREEZE_LIMIT_S
        try:
            while not self._halt.is_set():
                self._look(consumer, LOOK_S)  # with the JVM stopped: nothing new can be written meanwhile
                if want <= self.seen:
                    self.site.maybe_fire(POINT, batch, via="kafka-commit-watcher", records=len(want))
                    return  # not reached for a SIGKILL; another watcher's claim got there first otherwise
                if time.monotonic() > deadline:
                    self.skipped.add(batch)
                    return
                signal_all(self.frozen, signal.SIGCONT)
                time.sleep(SLICE_S)
                signal_all(self.frozen, signal.SIGSTOP)
        finally:
            signal_all(self.frozen, signal.SIGCONT)
            self.frozen = []


_watchers: dict[str, TopicCommitWatcher] = {}


def watch_commits(
    site: FaultSite,
    checkpoint: str,
    output: str,
    bootstrap: str,
    topic: str,
    expected: Callable[[int], set[Hashable] | None],
    identify: Callable[[bytes | None], Hashable | None],
) -> None:
    """Start a :class:`TopicCommitWatcher` in this driver for the run of ``site`` when a :data:`POINT` rule is
    armed and none is watching yet (one per run directory and driver; a new query of the same run reuses it)."""
    if site.dir is None or not site.armed_at(POINT):
        return
    key = str(site.dir)
    alive = _watchers.get(key)
    if alive is not None and alive.is_alive():
        return
    _watchers[key] = TopicCommitWatcher(site, checkpoint, output, bootstrap, topic, expected, identify)
    _watchers[key].start()
