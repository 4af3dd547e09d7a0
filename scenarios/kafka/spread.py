"""A Kafka topic filled while an epoch run runs (``SourceRun.spread_s``): a round's records produced a few at a
time over seconds in a daemon thread, so a continuous or Real-time Mode query's kills land among rows in flight.
A driver killed meanwhile leaves the rest to the next driver's :meth:`KafkaTopic.stream`, which produces what
the topic lacks."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from scenarios.tap import read_tap

if TYPE_CHECKING:
    from scenarios.sources import SourceRun


#: Spreading publishers by (bootstrap, topic): at most one per topic in a driver process.
_SPREADING: dict[tuple[str, str], threading.Thread] = {}
#: Records per produce call while spreading a round.
SPREAD_CHUNK = 8


def wait_spreading(where: tuple[str, str]) -> None:
    thread = _SPREADING.get(where)
    if thread is not None:
        thread.join()


def spread(source: Any, run: SourceRun) -> None:
    """Produce what the tap has and the topic lacks over ``run.spread_s`` seconds, in a daemon thread, a few
    records at a time (a driver killed meanwhile leaves the rest to the next driver's :meth:`KafkaTopic.stream`,
    which produces what the topic lacks)."""
    from scenarios.kafka import client

    bootstrap, topic = where = source.where(run)
    available = read_tap(run.tap)
    if not client.topic_exists(bootstrap, topic):
        client.create_topic(bootstrap, topic, max(len(available), run.config.partitions))
    have = client.end_offsets(bootstrap, topic)
    if any(p not in have for p in available):  # the tap grew partitions: publish() grows the topic first
        source.publish(run)
        return
    records = [
        r
        for partition, end in sorted(available.items())
        if end > have.get(partition, 0)
        for r in source.records(run.config, partition, have.get(partition, 0), end)
    ]
    chunks = [records[i : i + SPREAD_CHUNK] for i in range(0, len(records), SPREAD_CHUNK)]
    pause = run.spread_s / max(1, len(chunks))

    def produce() -> None:
        for chunk in chunks:
            client.produce(bootstrap, topic, chunk)
            time.sleep(pause)

    thread = threading.Thread(target=produce, name=f"spread-{topic}", daemon=True)
    _SPREADING[where] = thread
    thread.start()
