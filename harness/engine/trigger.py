"""Triggers as a run axis: how the query is started and when a run of it ends.

A run names its trigger as ``RunSpec.trigger`` (``run --trigger``):

- ``None`` (the default): each round runs the query with ``Trigger.AvailableNow`` until it has caught up; a
  driver killed mid-round is replaced and the round's query restarted at once, until the round catches up.
- ``available-now`` / ``once``: a *scheduled job*. Each round is one job run, started on the checkpoint and
  ending by itself (``availableNow``: everything available when it starts, in batches of the read limit;
  ``once``: one batch, read limits ignored). A job killed halfway is over: the next round's job goes on from
  the checkpoint, as the next scheduled run does; the last job runs until one ends by itself.
- ``processing-time:<interval>``: a long-running query whose batches the clock plans; the driver stops it
  (gracefully) once it has processed everything available, and a killed driver is restarted at once.
- ``continuous:<interval>`` and ``real-time:<interval>``: epochs, not micro-batches (:mod:`harness.engine.epochs`).

Intervals are parsed here the way Spark parses them (``"500 milliseconds"``, ``"2 seconds"``,
``"1 minute 30 seconds"``), so an interval Spark would refuse is refused before Spark starts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from scenarios.admission import plan_batches

if TYPE_CHECKING:
    from scenarios.base import Scenario


class _Spec(Protocol):
    """What :func:`run_trigger` reads of a ``RunSpec`` (which imports this module)."""

    @property
    def trigger(self) -> str | None: ...

    @property
    def confs(self) -> dict[str, str]: ...


#: The kinds a run may name, in the order docs and ``list`` show them.
KINDS = ("available-now", "once", "processing-time", "continuous", "real-time")
#: The default rounds' kind (not named by a run: a run without a trigger gets it).
ROUNDS = "rounds"
#: Kinds whose job runs end by themselves (a scheduled job).
SCHEDULED = ("available-now", "once")
#: Kinds that take an interval.
TIMED = ("processing-time", "continuous", "real-time")
#: Kinds without micro-batches: no batch hooks, one offsets and one commits entry per epoch.
EPOCHS = ("continuous", "real-time")

#: Milliseconds per interval unit (Spark's ``IntervalUtils`` names; singular and plural alike).
_UNITS_MS = {
    "microsecond": 0.001,
    "millisecond": 1,
    "second": 1000,
    "minute": 60_000,
    "hour": 3_600_000,
    "day": 86_400_000,
    "week": 7 * 86_400_000,
}
_MONTHS = ("month", "year")
_PART = re.compile(r"([+-]?\d+(?:\.\d+)?)\s+([a-z]+)")  # Spark wants the space: "200milliseconds" fails
#: Spark refuses a real-time batch shorter than this conf (INVALID_STREAMING_REAL_TIME_MODE_TRIGGER_INTERVAL).
REAL_TIME_MIN_CONF = "spark.sql.streaming.realTimeMode.minBatchDuration"
REAL_TIME_MIN_MS = 5000  # the conf's default


@dataclass(frozen=True)
class Trigger:
    """A parsed trigger: ``kind`` (one of :data:`KINDS`) and, for a timed kind, ``interval`` as given and its
    length in ms."""

    kind: str
    interval: str | None = None
    interval_ms: int = 0

    @property
    def scheduled(self) -> bool:
        return self.kind in SCHEDULED

    @property
    def epochs(self) -> bool:
        return self.kind in EPOCHS

    @property
    def rounds(self) -> bool:
        """The default: rounds run until caught up, a killed round restarted (no ``--trigger`` given)."""
        return self.kind == ROUNDS

    @property
    def one_batch(self) -> bool:
        """A job makes one batch and ignores the source's read limits (``once``)."""
        return self.kind == "once"

    @property
    def census_batches(self) -> bool:
        """Its batches are those a census under the default rounds saw (``availableNow``'s, or the clock's over
        the same data), so sink-step draws from that census aim at batches this trigger makes."""
        return self.kind in (ROUNDS, "available-now", "processing-time")

    @property
    def clocked(self) -> bool:
        """The clock plans the batches of one long-running query (``processing-time``)."""
        return self.kind == "processing-time"

    def text(self) -> str:
        """As ``--trigger`` takes it."""
        return self.kind if self.interval is None else f"{self.kind}:{self.interval}"

    def writer_options(self) -> dict[str, object]:
        """Keyword arguments of ``DataStreamWriter.trigger``."""
        if self.kind in ("available-now", ROUNDS):
            return {"availableNow": True}
        if self.one_batch:
            return {"once": True}
        key = {"processing-time": "processingTime", "continuous": "continuous", "real-time": "realTime"}[self.kind]
        return {key: self.interval}

    def describe(self) -> str:
        return {
            ROUNDS: "rounds until caught up (availableNow; a killed round is restarted until it catches up)",
            "available-now": "scheduled availableNow jobs (a killed job is over; the next round's job goes on)",
            "once": "scheduled once jobs, one batch each (a killed job is over; the next round's job goes on)",
            "processing-time": f"processing-time trigger every {self.interval}, stopped once caught up",
            "continuous": f"continuous processing, checkpoint every {self.interval}",
            "real-time": f"Real-time Mode, batches of {self.interval}",
        }[self.kind]


def parse_interval(text: str, where: str) -> int:
    """``text`` in ms, parsed like Spark's trigger intervals: ``[interval] N unit [N unit ...]`` with units from
    microseconds to weeks. ``ValueError`` (one line, naming ``where``) for what Spark refuses: no number or unit,
    an unknown unit, months or years (not a fixed length), a negative interval."""
    body = text.strip().lower()
    body = body[len("interval") :].strip() if body.startswith("interval") else body
    usage = f"{where}: interval {text!r} is not one Spark accepts; give it as 'N unit', e.g. '500 milliseconds', "
    usage += "'2 seconds', '1 minute 30 seconds'"
    words = body.split()
    if not words or len(words) % 2:
        raise ValueError(usage)
    parts = list(zip(words[::2], words[1::2], strict=True))
    if not all(_PART.fullmatch(f"{a} {u}") for a, u in parts):
        raise ValueError(usage)
    total = 0.0
    for amount, unit in parts:
        name = unit[:-1] if unit.endswith("s") else unit
        if "." in amount and name != "second":
            raise ValueError(f"{where}: interval {text!r}: Spark takes a fraction in seconds only")
        if name in _MONTHS:
            raise ValueError(f"{where}: interval {text!r}: Spark refuses month and year intervals in a trigger")
        if name not in _UNITS_MS:
            raise ValueError(usage)
        total += float(amount) * _UNITS_MS[name]
    if total < 0:
        raise ValueError(f"{where}: interval {text!r} is negative; Spark refuses it")
    return int(total)


def parse_trigger(text: str) -> Trigger:
    """``KIND`` or ``KIND:INTERVAL`` -> a :class:`Trigger`; ``ValueError`` (one line) names what is wrong."""
    kind, sep, interval = text.strip().partition(":")
    if kind not in KINDS:
        raise ValueError(f"trigger {text!r}: expected one of {', '.join(KINDS)} (timed ones as KIND:INTERVAL)")
    if kind not in TIMED:
        if sep:
            raise ValueError(f"trigger {text!r}: {kind} takes no interval")
        return Trigger(kind)
    if not interval.strip():
        raise ValueError(f"trigger {text!r}: {kind} needs an interval, e.g. {kind}:2 seconds")
    ms = parse_interval(interval, f"trigger {kind}")
    if kind == "real-time" and ms <= 0:
        raise ValueError(f"trigger {text!r}: Spark refuses a real-time batch duration that is not positive")
    return Trigger(kind, interval.strip(), ms)


def run_trigger(spec: _Spec, scenario: Scenario) -> Trigger:
    """The trigger ``spec`` runs ``scenario`` under: the spec's, else the scenario's default, else the default
    rounds (:data:`ROUNDS`); ``ValueError`` (one line) for one the scenario cannot run under."""
    text = spec.trigger or scenario.default_trigger
    if text is None:
        return Trigger(ROUNDS)
    trigger = parse_trigger(text)
    confs = {**scenario.confs, **spec.confs}
    if trigger.kind == "real-time" and REAL_TIME_MIN_CONF not in confs and trigger.interval_ms < REAL_TIME_MIN_MS:
        raise ValueError(
            f"trigger {trigger.text()}: Spark refuses a real-time batch shorter than {REAL_TIME_MIN_CONF} "
            f"({REAL_TIME_MIN_MS} ms by default); give a longer one or set that conf"
        )
    if trigger.kind not in scenario.triggers:
        runs = ", ".join(scenario.triggers) or "none"
        raise ValueError(
            f"scenario {scenario.name} cannot run under trigger {trigger.text()} (it runs under: {runs}); "
            f"{scenario.trigger_note}"
        )
    return trigger


def sure_batches(kind: str, rounds: Sequence[Mapping[int, int]], limit: int | None, kills: int) -> int:
    """How many batch ids a scheduled run (``kind`` in :data:`SCHEDULED`) of ``rounds`` (offset units per
    partition, per round) makes whatever its kills do, so seeded faults aim below it and all fire.

    ``available-now``: a killed job leaves its rest to the next job, which reads it with the new round's data, so
    batches merge; no split of the data makes fewer batches than all of it read at once, in batches of ``limit``.
    ``once``: each job is one batch; a killed job's batch is replayed by the next job under the same id, so at
    least ``len(rounds) - kills`` round jobs read new data."""
    if kind == "once":
        return max(0, len(rounds) - kills)
    total: dict[int, int] = {}
    for r in rounds:
        for p, n in r.items():
            total[p] = total.get(p, 0) + n
    return len(plan_batches(dict.fromkeys(total, 0), total, limit))
