"""Faults a Kafka topic suffers between two runs of the query (source nemeses, ``--nemesis NAME``), applied by
the runner while no query runs, to the last round's input before the query reads it:

- ``age_out_records``: produce what the tap made available, then delete the oldest records of one partition
  (the one with the most unread records) up to half-way through its unread ones, as retention does: the log
  start offset moves past records the query has not read. The lost range is ``[end of the newest committed
  batch, new log start)``. Spark's Kafka source then fails the query (``failOnDataLoss=true``, the default)
  or skips them (``false``); the oracle still expects them (:meth:`KafkaTopic.batch` regenerates deleted
  records from the tap), so skipped rows are ``lost``, reported as allowed by ``failOnDataLoss=false``.
- ``add_partitions``: add one partition to the topic (and to the tap) and produce rows into it: the row
  function's rows for the new partition index, as many as the round's busiest partition got, so provenance
  names them. Spark's Kafka source must read it from offset 0, so the damage is benign: a query Spark fails
  after it, restarted from its checkpoint after a crash, is a ``recovery-failed`` verdict, not "no verdict".

Each returns a :class:`~scenarios.sources.SourceDamage` saying what it did (and, for an age-out, what the query
lost and whether its ``failOnDataLoss`` allows skipping it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from fault_injectors.nemesis import NemesisError
from scenarios.kafka.offsets import committed_window
from scenarios.sources import SourceDamage
from scenarios.tap import add_partitions as add_tap_partitions
from scenarios.tap import read_tap

if TYPE_CHECKING:
    from scenarios.sources import SourceRun


class KafkaTopic(Protocol):
    """What the faults use of :class:`scenarios.kafka.KafkaTopic` (which imports this module)."""

    @property
    def options(self) -> tuple[tuple[str, str], ...]: ...

    def publish(self, run: SourceRun) -> dict[int, int]: ...

    def where(self, run: SourceRun) -> tuple[str, str]: ...


AGE_OUT = "age_out_records"
ADD_PARTITIONS = "add_partitions"
#: The source nemeses of a Kafka topic: name -> what it does.
KAFKA_NEMESES = {
    AGE_OUT: (
        "delete the oldest records of one partition up to half-way through those the query has not read yet "
        "(retention moving the log start offset), after producing the round's records"
    ),
    ADD_PARTITIONS: "add a partition to the topic and produce the row function's rows for it into it",
}


def loss_setting(options: tuple[tuple[str, str], ...]) -> tuple[str, bool]:
    """``("failOnDataLoss=<value>", allowed)``: the source option (Spark's default ``true``) and whether it lets
    the query skip records deleted before it read them."""
    value = next((v for k, v in options if k.lower() == "failondataloss"), "true").strip().lower()
    return f"failOnDataLoss={value}", value == "false"


def unread_from(spec: KafkaTopic, run: SourceRun, topic: str) -> dict[int, int]:
    """Per tap partition, the first offset no committed batch has read (the newest committed ``offsets/N``, else
    where the source started, else 0)."""
    start, end = committed_window(run.checkpoint, topic)
    return {p: end.get(p, start.get(p, 0)) for p in read_tap(run.tap)}


def age_out(spec: KafkaTopic, run: SourceRun) -> SourceDamage:
    """``age_out_records`` (module docstring)."""
    from scenarios.kafka import client

    bootstrap, topic = spec.where(run)
    unread = unread_from(spec, run, topic)
    spec.publish(run)
    ends = client.end_offsets(bootstrap, topic)
    setting, allowed = loss_setting(spec.options)
    waiting = {p: ends.get(p, 0) - unread[p] for p in unread}
    partition = max(sorted(waiting), key=lambda p: waiting[p])
    if waiting[partition] <= 0:
        return SourceDamage(f"nothing to age out: topic {topic} has no record the query has not read", (),
                            f"topic {topic}", setting, allowed, benign=True)  # fmt: skip
    first = unread[partition]
    cut = first + (waiting[partition] + 1) // 2
    if client.start_offsets(bootstrap, topic).get(partition, 0) > first:
        raise NemesisError(f"topic {topic} partition {partition}: records from {first} on are already gone")
    client.delete_records(bootstrap, topic, {partition: cut})
    description = (
        f"deleted the records of topic {topic} partition {partition} below offset {cut} (log start -> {cut}); "
        f"[{first}, {cut}) had not been read by the query ({setting})"
    )
    return SourceDamage(description, ((partition, first, cut),), f"topic {topic}", setting, allowed)


def add_partition(spec: KafkaTopic, run: SourceRun) -> SourceDamage:
    """``add_partitions`` (module docstring)."""
    from scenarios.kafka import client

    bootstrap, topic = spec.where(run)
    unread = unread_from(spec, run, topic)
    tap = read_tap(run.tap)
    new = max(tap) + 1 if tap else 0
    rows = max([1, *(tap[p] - unread[p] for p in tap)])
    add_tap_partitions(run.tap, {new: rows})
    had = len(client.partitions(bootstrap, topic)) if client.topic_exists(bootstrap, topic) else 0
    spec.publish(run)  # grows the topic to the tap's partitions, then produces what it lacks
    return SourceDamage(
        f"added partition {new} to topic {topic} ({had} -> {new + 1} partitions) and produced {rows} record(s) "
        f"into it (offsets [0, {rows}))",
        where=f"topic {topic}",
        benign=True,  # Spark's Kafka source reads new partitions from their start: a query must carry on
    )


def apply(spec: KafkaTopic, name: str, run: SourceRun) -> SourceDamage:
    """Apply the Kafka source nemesis ``name`` (:data:`KAFKA_NEMESES`)."""
    if name == AGE_OUT:
        return age_out(spec, run)
    if name == ADD_PARTITIONS:
        return add_partition(spec, run)
    raise NemesisError(f"unknown Kafka source nemesis {name!r}; known: {', '.join(KAFKA_NEMESES)}")
