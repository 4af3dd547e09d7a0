"""The harness's own Kafka client (over ``confluent_kafka``): topics, producing, reading exact ranges back.

Each call opens its own short-lived client and closes it, so nothing is shared between calls or processes.
Contracts:

- Errors are one line: :class:`BrokerUnreachable` names the bootstrap address, :class:`TopicMissing` the
  topic; anything else the broker refuses is a :class:`KafkaClientError` saying what was asked.
- :func:`produce` uses an idempotent producer (``acks=all``), flushes, and raises on any delivery error;
  it returns each record's offset.
- :func:`read_range` reads exactly ``[start, end)`` of each partition (assign and seek, no consumer group),
  or raises within ``timeout_s``; ``read_committed`` skips records of aborted transactions.
- :func:`delete_records` does what retention does: it moves a partition's log start offset, so a test
  ages records out deterministically; :func:`start_offsets` reads the log start offsets back.
- :func:`create_topic` and :func:`add_partitions` return once the broker serves every partition.
"""

from __future__ import annotations

import functools
import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from harness.errors import HarnessFailure
from scenarios.base import ResourceUnavailable

if TYPE_CHECKING:
    from confluent_kafka import Message
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.admin._metadata import TopicMetadata

TIMEOUT_S = 30.0
Isolation = Literal["read_committed", "read_uncommitted"]

# librdkafka logs every refused connection to stderr; the errors that matter reach callers as exceptions.
_QUIET = logging.getLogger("scenarios.kafka.client.librdkafka")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


class KafkaClientError(HarnessFailure, RuntimeError):
    """A Kafka request failed; the message says which and why. ``retriable``: Kafka marks the error as one that
    goes away by itself (e.g. a partition's leader not known yet just after the topic was created)."""

    retriable: bool = False


# Error codes Kafka's protocol marks retriable (Java's ``RetriableException`` subclasses). librdkafka's own
# ``retriable()`` flag is unset on admin results: measured, a ``list_offsets`` just after a topic was created
# failed CI with "Not leader for partition" (code 6) that ``retriable()`` called permanent.
_TRANSIENT = frozenset({3, 5, 6, 7, 13, 14, 15, 16, 19, 20, 56, 74, 75, 78})


def transient(code: int, flagged: bool = False) -> bool:
    """True if an error with Kafka error ``code`` goes away by itself (leader moves, log recovery, election);
    ``flagged``: librdkafka marked it retriable."""
    return flagged or code in _TRANSIENT


class BrokerUnreachable(KafkaClientError, ResourceUnavailable):
    """No broker answered at the bootstrap address."""


class TopicMissing(KafkaClientError):
    """The topic does not exist on the broker."""


@dataclass(frozen=True)
class Record:
    """A record to produce to ``partition``."""

    partition: int
    value: bytes | None
    key: bytes | None = None
    headers: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True)
class Fetched:
    """A record read back, with its place in the log."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp_ms: int


def _conf(bootstrap: str, **extra: Any) -> dict[str, Any]:
    return {"bootstrap.servers": bootstrap, "logger": _QUIET, "client.id": "harness", **extra}


def _admin(bootstrap: str) -> AdminClient:
    from confluent_kafka.admin import AdminClient

    return AdminClient(_conf(bootstrap))


def _unreachable(bootstrap: str, exc: BaseException) -> BrokerUnreachable:
    return BrokerUnreachable(f"Kafka broker at {bootstrap} unreachable: {_reason(exc)}")


def _reason(exc: BaseException) -> str:
    err = exc.args[0] if exc.args else exc
    text = err.str() if hasattr(err, "str") else str(err)
    return " ".join(str(text).split())


def list_topics(bootstrap: str, *, timeout_s: float = TIMEOUT_S) -> dict[str, TopicMetadata]:
    """The broker's topics by name (internal ones included); :class:`BrokerUnreachable` if none answers."""
    from confluent_kafka import KafkaException

    try:
        return dict(_admin(bootstrap).list_topics(timeout=timeout_s).topics)
    except KafkaException as exc:
        raise _unreachable(bootstrap, exc) from None


def topic_exists(bootstrap: str, topic: str) -> bool:
    return topic in list_topics(bootstrap)


def partitions(bootstrap: str, topic: str) -> list[int]:
    """The topic's partition ids, sorted; :class:`TopicMissing` if there is no such topic."""
    meta = list_topics(bootstrap).get(topic)
    if meta is None or meta.error is not None:
        raise TopicMissing(f"Kafka topic {topic!r} does not exist on {bootstrap}")
    return sorted(meta.partitions)


def _wait_served(bootstrap: str, topic: str, count: int, deadline: float) -> None:
    while True:
        meta = list_topics(bootstrap).get(topic)
        if meta is not None and len(meta.partitions) >= count and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        if time.monotonic() > deadline:
            raise KafkaClientError(f"Kafka topic {topic!r} on {bootstrap}: {count} partition(s) not served in time")
        time.sleep(0.05)


def _result(bootstrap: str, what: str, future: Any, timeout_s: float) -> Any:
    from confluent_kafka import KafkaError, KafkaException

    try:
        return future.result(timeout=timeout_s)
    except KafkaException as exc:
        err = exc.args[0] if exc.args else None
        if err is not None and err.code() in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN):
            raise _unreachable(bootstrap, exc) from None
        error = KafkaClientError(f"Kafka {what} on {bootstrap} failed: {_reason(exc)}")
        error.retriable = err is not None and transient(err.code(), bool(err.retriable()))
        raise error from None
    except TimeoutError:
        raise KafkaClientError(f"Kafka {what} on {bootstrap}: no answer within {timeout_s:.0f} s") from None


def create_topic(
    bootstrap: str,
    topic: str,
    partitions: int,
    config: Mapping[str, str] | None = None,
    *,
    timeout_s: float = TIMEOUT_S,
) -> None:
    """Create ``topic`` with ``partitions`` partitions (replication 1) and topic ``config``; an existing topic
    is a :class:`KafkaClientError`."""
    from confluent_kafka.cimpl import NewTopic

    list_topics(bootstrap)  # unreachable -> one line naming the address
    new = NewTopic(topic, num_partitions=partitions, replication_factor=1, config=dict(config or {}))
    admin = _admin(bootstrap)  # kept alive until its futures are done: a collected client cancels them
    futures = admin.create_topics([new], operation_timeout=timeout_s)
    _result(bootstrap, f"create topic {topic!r}", futures[topic], timeout_s)
    _wait_served(bootstrap, topic, partitions, time.monotonic() + timeout_s)


def add_partitions(bootstrap: str, topic: str, total: int, *, timeout_s: float = TIMEOUT_S) -> None:
    """Grow ``topic`` to ``total`` partitions (Kafka never shrinks a topic)."""
    from confluent_kafka.cimpl import NewPartitions

    partitions(bootstrap, topic)  # missing -> TopicMissing
    admin = _admin(bootstrap)
    futures = admin.create_partitions([NewPartitions(topic, total)], operation_timeout=timeout_s)
    _result(bootstrap, f"add partitions to {topic!r} (total {total})", futures[topic], timeout_s)
    _wait_served(bootstrap, topic, total, time.monotonic() + timeout_s)


def produce(bootstrap: str, topic: str, records: Iterable[Record], *, timeout_s: float = TIMEOUT_S) -> list[int]:
    """Produce ``records`` in order (idempotent producer, ``acks=all``) and flush; returns each record's
    offset. Raises on the first delivery error, and when a record names a partition the topic lacks."""
    from confluent_kafka import KafkaException, Producer

    have = set(partitions(bootstrap, topic))
    batch = list(records)
    for r in batch:
        if r.partition not in have:
            raise KafkaClientError(f"Kafka topic {topic!r} has no partition {r.partition} (it has {len(have)})")
    offsets: list[int] = [-1] * len(batch)
    errors: list[str] = []
    conf = _conf(bootstrap, **{"enable.idempotence": True, "linger.ms": 5, "message.timeout.ms": int(timeout_s * 1000)})
    producer = Producer(conf)

    def delivered(i: int, err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(f"partition {msg.partition()}: {err.str()}")
        else:
            offsets[i] = msg.offset()

    for i, r in enumerate(batch):
        while True:
            try:
                producer.produce(
                    topic, value=r.value, key=r.key, partition=r.partition, headers=list(r.headers) or None,
                    on_delivery=functools.partial(delivered, i),
                )  # fmt: skip
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                producer.poll(0.1)
            except KafkaException as exc:
                raise KafkaClientError(f"Kafka produce to {topic!r} on {bootstrap} failed: {_reason(exc)}") from None
    left = producer.flush(timeout_s)
    if errors:
        raise KafkaClientError(f"Kafka produce to {topic!r} on {bootstrap}: {len(errors)} failed, first {errors[0]}")
    if left:
        raise KafkaClientError(f"Kafka produce to {topic!r} on {bootstrap}: {left} record(s) undelivered after flush")
    return offsets


def _list_offsets(bootstrap: str, topic: str, spec: str, isolation: Isolation, timeout_s: float) -> dict[int, int]:
    from confluent_kafka import IsolationLevel, TopicPartition
    from confluent_kafka.admin._listoffsets import OffsetSpec

    level = IsolationLevel.READ_COMMITTED if isolation == "read_committed" else IsolationLevel.READ_UNCOMMITTED
    deadline = time.monotonic() + timeout_s
    while True:
        parts = partitions(bootstrap, topic)
        want = {TopicPartition(topic, p): getattr(OffsetSpec, spec)() for p in parts}
        admin = _admin(bootstrap)
        futures = admin.list_offsets(want, isolation_level=level, request_timeout=timeout_s)
        try:
            return {
                tp.partition: int(_result(bootstrap, f"list {spec} offsets of {topic!r}", f, timeout_s).offset)
                for tp, f in futures.items()
            }
        except KafkaClientError as exc:
            # Measured: "Not leader for partition" right after a topic was created or a broker restarted.
            if not exc.retriable or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def end_offsets(
    bootstrap: str, topic: str, *, isolation: Isolation = "read_uncommitted", timeout_s: float = TIMEOUT_S
) -> dict[int, int]:
    """Each partition's end offset: the high watermark (``read_committed``: the last stable offset)."""
    return _list_offsets(bootstrap, topic, "latest", isolation, timeout_s)


def start_offsets(bootstrap: str, topic: str, *, timeout_s: float = TIMEOUT_S) -> dict[int, int]:
    """Each partition's log start offset: the first offset still readable after deletions and retention."""
    return _list_offsets(bootstrap, topic, "earliest", "read_uncommitted", timeout_s)


def delete_records(bootstrap: str, topic: str, before: Mapping[int, int], *, timeout_s: float = TIMEOUT_S) -> None:
    """Delete every record below ``before[p]`` in partition ``p`` (the log start offset moves there)."""
    from confluent_kafka import TopicPartition

    partitions(bootstrap, topic)
    request = [TopicPartition(topic, p, off) for p, off in sorted(before.items())]
    admin = _admin(bootstrap)
    futures = admin.delete_records(request, request_timeout=timeout_s, operation_timeout=timeout_s)
    for tp, f in futures.items():
        _result(bootstrap, f"delete records of {topic!r} partition {tp.partition} before {tp.offset}", f, timeout_s)


def _fetched(topic: str, bootstrap: str, msg: Message) -> Fetched:
    err, partition, offset = msg.error(), msg.partition(), msg.offset()
    if err is not None or partition is None or offset is None:
        raise KafkaClientError(f"Kafka read of {topic!r} on {bootstrap} failed: {err.str() if err else 'no offset'}")
    raw = msg.headers() or []
    pairs = raw.items() if isinstance(raw, dict) else raw
    headers = tuple((k, v if isinstance(v, bytes) else (v or "").encode()) for k, v in pairs)
    return Fetched(partition, offset, msg.key(), msg.value(), headers, msg.timestamp()[1])


def read_range(
    bootstrap: str,
    topic: str,
    ranges: Mapping[int, tuple[int, int]],
    *,
    isolation: Isolation = "read_committed",
    timeout_s: float = TIMEOUT_S,
) -> list[Fetched]:
    """The records of ``[start, end)`` of each partition in ``ranges``, by partition then offset. A range
    that starts below the log start offset (deleted records) or ends past the end offset is refused; a read
    that does not finish within ``timeout_s`` raises, naming where each unfinished partition stands."""
    from confluent_kafka import Consumer, TopicPartition

    wanted = {p: (s, e) for p, (s, e) in ranges.items() if e > s}
    if not wanted:
        return []
    first = start_offsets(bootstrap, topic, timeout_s=timeout_s)
    last = end_offsets(bootstrap, topic, isolation=isolation, timeout_s=timeout_s)  # read_committed: stable end
    for p, (s, e) in sorted(wanted.items()):
        if s < first.get(p, 0) or e > last.get(p, -1):
            held = f"it holds [{first[p]}, {last[p]})" if p in first else "no such partition"
            raise KafkaClientError(f"Kafka topic {topic!r} partition {p}: cannot read [{s}, {e}), {held}")
    group = f"harness-read-{uuid.uuid4().hex}"  # assign() only: the group is never joined, nothing committed
    conf = {"group.id": group, "enable.auto.commit": False, "isolation.level": isolation, "auto.offset.reset": "error"}
    consumer = Consumer(_conf(bootstrap, **conf))
    out: list[Fetched] = []
    try:
        consumer.assign([TopicPartition(topic, p, s) for p, (s, _) in wanted.items()])
        pending = dict(wanted)
        deadline = time.monotonic() + timeout_s
        while pending:
            if time.monotonic() > deadline:
                where = ", ".join(f"p{p} [{s}, {e})" for p, (s, e) in sorted(pending.items()))
                raise KafkaClientError(
                    f"Kafka read of {topic!r} on {bootstrap} unfinished after {timeout_s:.0f} s: {where}"
                )
            for msg in consumer.consume(500, timeout=0.2):
                fetched = _fetched(topic, bootstrap, msg)
                span = pending.get(fetched.partition)
                if span is not None and span[0] <= fetched.offset < span[1]:
                    out.append(fetched)
            done = [
                tp
                for tp in consumer.position([TopicPartition(topic, p) for p in pending])
                if tp.offset >= pending[tp.partition][1]
            ]
            if done:
                consumer.pause(done)  # nothing past the range is fetched
                for tp in done:
                    del pending[tp.partition]
    finally:
        consumer.close()
    return sorted(out, key=lambda f: (f.partition, f.offset))
