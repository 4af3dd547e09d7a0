"""The Kafka broker and topic of one run: the scenario resource of every :class:`~scenarios.kafka.KafkaTopic`.

A pytest session or a chaos campaign starts one broker and shares it (``$HARNESS_KAFKA_BOOTSTRAP``, set by
:func:`shared_broker`); a run started alone gets a throw-away broker of its own inside its run directory.
Either way each run gets a topic of its own, named after its run directory, so runs sharing a broker never
read each other's records.

A broker the harness starts is supervised by the process that started it (:mod:`scenarios.kafka.supervisor`):
a ``kill_broker`` fault SIGKILLs it, the supervisor restarts it on the same ports and data. The run's setting
``broker_file`` names the JSON file where the broker says its pid (rewritten on every start), which is how the
fault finds it; a broker given with ``--kafka`` (:func:`given_broker`) has none, so it is never killed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from scenarios.rowgen import ConfigError

if TYPE_CHECKING:
    from scenarios.sources import SourceRun

#: The resources a Kafka run provides: the broker's address and the run's own topic.
BOOTSTRAP, TOPIC = "bootstrap", "topic"
#: The run's setting naming the file where the broker the harness started says its pid (``kill_broker``).
BROKER_FILE = "broker_file"
#: The address of a broker shared by the runs of one pytest session or campaign.
BOOTSTRAP_ENV = "HARNESS_KAFKA_BOOTSTRAP"
#: The ``broker_file`` of the shared broker, when the harness started and supervises it (not with ``--kafka``).
BROKER_FILE_ENV = "HARNESS_KAFKA_BROKER_FILE"


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
        owned = os.environ.get(BROKER_FILE_ENV)
        yield {BOOTSTRAP: shared, TOPIC: topic_for(workdir), **({BROKER_FILE: owned} if owned else {})}
        return
    from scenarios.kafka.broker import throwaway_kafka
    from scenarios.kafka.supervisor import supervised

    with throwaway_kafka(workdir) as broker, supervised(broker):
        yield {
            BOOTSTRAP: broker.bootstrap,
            TOPIC: topic_for(workdir),
            "broker_pid": str(broker.pid),
            BROKER_FILE: str(broker_file(workdir)),
        }


def broker_file(workdir: Path) -> Path:
    """Where the broker started in ``workdir`` says where it is (``kafka.json``: bootstrap, pid, log)."""
    return Path(workdir) / "kafka.json"


@contextlib.contextmanager
def shared_broker(workdir: Path) -> Iterator[str]:
    """Start one supervised broker in ``workdir`` for every run until exit (sets :data:`BOOTSTRAP_ENV` and
    :data:`BROKER_FILE_ENV`); reuses one that is already shared."""
    if os.environ.get(BOOTSTRAP_ENV):
        yield os.environ[BOOTSTRAP_ENV]
        return
    from scenarios.kafka.broker import throwaway_kafka
    from scenarios.kafka.supervisor import supervised

    with throwaway_kafka(workdir) as broker, supervised(broker):
        os.environ[BOOTSTRAP_ENV] = broker.bootstrap
        os.environ[BROKER_FILE_ENV] = str(broker_file(workdir))
        try:
            yield broker.bootstrap
        finally:
            os.environ.pop(BOOTSTRAP_ENV, None)
            os.environ.pop(BROKER_FILE_ENV, None)


@contextlib.contextmanager
def given_broker(bootstrap: str | None) -> Iterator[None]:
    """Every run until exit uses the broker at ``bootstrap`` (``--kafka``) instead of starting one; nothing
    changes for ``None``."""
    if bootstrap is None:
        yield
        return
    before = {k: os.environ.pop(k, None) for k in (BOOTSTRAP_ENV, BROKER_FILE_ENV)}
    os.environ[BOOTSTRAP_ENV] = bootstrap  # not the harness's broker: no broker file, never killed
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run_topic(run: SourceRun) -> tuple[str, str]:
    """The run's broker address and topic (its resources)."""
    if BOOTSTRAP not in run.resources or TOPIC not in run.resources:
        raise ConfigError(
            "KafkaTopic: the run has no Kafka broker (resources 'bootstrap' and 'topic'); run the scenario "
            "through the harness, which starts one (scenarios.kafka.resource.kafka_resource)"
        )
    return run.resources[BOOTSTRAP], run.resources[TOPIC]
