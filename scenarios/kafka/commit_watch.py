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
  (SIGSTOP) and let run in slices (:mod:`fault_injectors.sliced_commit`, the loop the Delta sink's watcher
  shares), and the topic is read between slices, while the JVM stands still;
- when every expected identity has been read, the rule fires (a SIGKILL of the driver's process groups) with
  the JVM still stopped. The ledger's ``commit_logged`` says whether ``commits/N`` was there all the same.

Only SIGKILL rules with an explicit batch are carried out, and only for a batch whose ``commits/N`` did not
exist when the watcher first saw it. A record identity read once counts, whichever attempt wrote it. A batch
whose records are not all in the topic within ``FREEZE_LIMIT_S`` of slicing is given up (the JVM runs
freely again; the rule never fires and the run reports it). The watcher ends when no such rule is left, when
the run's checkpoint is gone, or when the driver has moved on to another run (a pool driver:
:data:`scenarios.base.RUN_OUTPUT_ENV` names another output).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Hashable
from typing import Any

from fault_injectors.crash import FaultSite
from fault_injectors.sliced_commit import POINT, SlicedCommitWatcher, start_once

__all__ = ["POINT", "TopicCommitWatcher", "watch_commits"]

#: How long one look at the topic waits for records the consumer has not fetched yet.
LOOK_S = 0.003

_QUIET = logging.getLogger("scenarios.kafka.commit_watch.librdkafka")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


class TopicCommitWatcher(SlicedCommitWatcher):
    """Fires :data:`POINT` of batch N once ``expected(N)`` have all been read from ``topic`` (module docstring).
    ``expected(N)`` is ``None`` until ``offsets/N`` is logged."""

    via = "kafka-commit-watcher"
    # Spark writes commits/N soon after the last record is acknowledged, often before a consumer has read it.
    give_up_once_committed = False

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
        super().__init__(site, checkpoint, output, "harness-kafka-commit-watcher")
        self.bootstrap, self.topic = bootstrap, topic
        self.expected, self.identify = expected, identify
        self.seen: set[Hashable] = set()
        self._want: set[Hashable] | None = None
        self._kafka: Any = None

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

    def look(self, slicing: bool) -> None:
        if self._kafka is None:
            self._kafka = self._consumer()
        for msg in self._kafka.consume(1000, timeout=LOOK_S if slicing else 0.005):
            if msg.error() is None:
                ident = self.identify(msg.value())
                if ident is not None:
                    self.seen.add(ident)

    def ready(self, batch: int) -> bool:
        self._want = self.expected(batch)
        return self._want is not None

    def committed(self, batch: int) -> dict[str, Any] | None:
        want = self._want
        return {"records": len(want)} if want is not None and want <= self.seen else None

    def close(self) -> None:
        if self._kafka is not None:
            self._kafka.close()


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
    start_once(site, lambda: TopicCommitWatcher(site, checkpoint, output, bootstrap, topic, expected, identify))
