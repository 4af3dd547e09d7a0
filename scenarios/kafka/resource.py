"""The Kafka broker and topic of one run: the scenario resource of every :class:`~scenarios.kafka.KafkaTopic`.

A pytest session or a chaos campaign starts one broker and shares it (``$HARNESS_KAFKA_BOOTSTRAP``, set by
:func:`shared_broker`); a run started alone gets a throw-away broker of its own inside its run directory.
Either way each run gets a topic of its own, named after its run directory, so runs sharing a broker never
read each other's records.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

#: The resources a Kafka run provides: the broker's address and the run's own topic.
BOOTSTRAP, TOPIC = "bootstrap", "topic"
#: The address of a broker shared by the runs of one pytest session or campaign.
BOOTSTRAP_ENV = "HARNESS_KAFKA_BOOTSTRAP"


def topic_for(workdir: Path) -> str:
    """A topic name of the run directory ``workdir`` (stable for it, distinct between run directories)."""
    digest = hashlib.sha1(str(workdir.resolve()).encode()).hexdigest()[:12]
    return f"harness-{digest}"


@contextlib.contextmanager
def kafka_resource(workdir: Path) -> Iterator[dict[str, str]]:
    """``{"bootstrap": ..., "topic": ...}`` for one run: the shared broker when there is one, else a
    throw-away broker in ``workdir`` (stopped on exit)."""
    shared = os.environ.get(BOOTSTRAP_ENV)
    if shared:
        yield {BOOTSTRAP: shared, TOPIC: topic_for(workdir)}
        return
    from scenarios.kafka.broker import throwaway_kafka

    with throwaway_kafka(workdir) as broker:
        yield {BOOTSTRAP: broker.bootstrap, TOPIC: topic_for(workdir), "broker_pid": str(broker.pid)}


@contextlib.contextmanager
def shared_broker(workdir: Path) -> Iterator[str]:
    """Start one broker in ``workdir`` for every run until exit (sets :data:`BOOTSTRAP_ENV`); reuses one
    that is already shared."""
    if os.environ.get(BOOTSTRAP_ENV):
        yield os.environ[BOOTSTRAP_ENV]
        return
    from scenarios.kafka.broker import throwaway_kafka

    with throwaway_kafka(workdir) as broker:
        os.environ[BOOTSTRAP_ENV] = broker.bootstrap
        try:
            yield broker.bootstrap
        finally:
            os.environ.pop(BOOTSTRAP_ENV, None)


@contextlib.contextmanager
def given_broker(bootstrap: str | None) -> Iterator[None]:
    """Every run until exit uses the broker at ``bootstrap`` (``--kafka``) instead of starting one; nothing
    changes for ``None``."""
    if bootstrap is None:
        yield
        return
    before = os.environ.get(BOOTSTRAP_ENV)
    os.environ[BOOTSTRAP_ENV] = bootstrap
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(BOOTSTRAP_ENV, None)
        else:
            os.environ[BOOTSTRAP_ENV] = before
