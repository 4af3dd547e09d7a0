"""Crash points: where a fault may fire, one registered definition each, with an explicit order.

Everything the harness decides about a point reads it here (:func:`point`), never from its name: which
family it belongs to, whether a rule at it counts rows (``after_rows``), whether it runs in a task (and is
aimed at a partition), and which checkpoint file's appearance it is. The protocol points are in protocol
order: seeded ``--kills`` and campaigns draw a scenario's points by position, so the order is part of what a
seed generates (``tests/golden/schedules.json`` pins it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: ``protocol``: the named points of the micro-batch protocol, which seeded ``--kills`` draw; ``step``: a step
#: of the sink's own code; ``timed``: a timed kill; ``boundary``: a moment of Spark's state maintenance;
#: ``dstream``: a DStream batch boundary. Only ``protocol`` points are drawn without a plan naming them.
Family = Literal["protocol", "step", "timed", "boundary", "dstream"]


@dataclass(frozen=True)
class CrashPoint:
    """One crash point: its name (a fault rule's ``point``), where and how precisely it fires (``doc``)."""

    name: str
    doc: str
    family: Family
    #: A rule here may name ``after_rows`` and is aimed at one partition (the rows its task handed on).
    takes_rows: bool = False
    #: It fires inside a task (a source read or a sink write task), once per task of the batch.
    per_task: bool = False
    #: The checkpoint file whose appearance it is (``offsets``: ``offsets/N``; ``commits``: ``commits/N``).
    marks: Literal["", "offsets", "commits"] = ""
    #: It is the window between a sink's commit of batch N and Spark's ``commits/N``: a kill planned here that
    #: finds ``commits/N`` written (a watcher too slow) did not test what it was planned for.
    commit_window: bool = False
    #: A fault here may leave the sink holding batch N while ``commits/N`` is missing (the commit window, a step
    #: of the sink's own code): a restart must find the sink's own record of the batch.
    sink_may_hold: bool = False

    @property
    def after_commit(self) -> bool:
        """Whether it comes after Spark's ``commits/N`` by definition (a kill here cannot be "late")."""
        return self.marks == "commits"


PROTOCOL: tuple[CrashPoint, ...] = (
    CrashPoint(
        "source.latest_offset", "the source's latestOffset() for the next batch (replayable source; exact)", "protocol"
    ),
    CrashPoint(
        "after_offsets_logged",
        "offsets/N is on disk, nothing of batch N executed yet (replayable source: from partitions(), which "
        "Spark calls right after writing offsets/N; other sources: a checkpoint watcher, within ~10 ms)",
        "protocol",
        marks="offsets",
    ),
    CrashPoint(
        "source.read",
        "a task of batch N starts reading its source partition (replayable source; exact)",
        "protocol",
        per_task=True,
    ),
    CrashPoint(
        "sink.write.start",
        "a sink write task of batch N starts, before its first row (exact)",
        "protocol",
        per_task=True,
    ),
    CrashPoint(
        "sink.write.mid",
        "a sink write task of batch N has handed `after_rows` rows to the sink (exact per task)",
        "protocol",
        takes_rows=True,
        per_task=True,
    ),
    CrashPoint(
        "sink.write.end",
        "a sink write task has consumed all rows, its commit message is not returned yet (exact)",
        "protocol",
        per_task=True,
    ),
    CrashPoint(
        "sink.commit.before",
        "the driver-side sink commit of batch N is about to run (Python sink / foreachBatch; exact)",
        "protocol",
    ),
    CrashPoint(
        "sink.commit.after",
        "the sink has committed batch N, Spark's commits/N is not written yet (Python sink / foreachBatch: exact; "
        "file sink: a watcher on _spark_metadata/N, best effort — the ledger records whether commits/N existed)",
        "protocol",
        commit_window=True,
        sink_may_hold=True,
    ),
    CrashPoint(
        "after_commit_logged",
        "commits/N is on disk (replayable source: at its next latestOffset() call; other sources: a checkpoint "
        "watcher, within ~10 ms)",
        "protocol",
        marks="commits",
    ),
)
STEP = CrashPoint(
    "sink.step",
    "just after step K of the user's sink code returns in batch N (a call from the user's module into code "
    "outside it: a database driver, os, file I/O, another library); exact and deterministic",
    "step",
    sink_may_hold=True,
)
TIMED = CrashPoint(
    "batch.time",
    "SIGKILL T ms (after_ms) after offsets/N is written, i.e. T ms into batch N's execution; for JVM-side sinks "
    "that cannot be traced. NOT deterministic: the ledger records where it landed, replays may differ",
    "timed",
)
SNAPSHOT = CrashPoint(
    "state.snapshot",
    "a full copy of state version N+1 (written by batch N) has just appeared: an HDFS .snapshot or a RocksDB "
    ".zip, written by the maintenance task or at the commit (checkpoint watcher, within ~20 ms; the driver "
    "killed only)",
    "boundary",
)
PURGE = CrashPoint(
    "state.purge",
    "the first state file deleted once commits/N is on disk: the maintenance task purging versions older "
    "than spark.sql.streaming.minBatchesToRetain, mid-purge (checkpoint watcher, within ~20 ms; the driver killed "
    "only)",
    "boundary",
)
DSTREAM: tuple[CrashPoint, ...] = (
    CrashPoint(
        "dstream.batch.start",
        "DStream batch N's jobs run: checkpoint-<time> of its generation is written (the harness waits for it), its "
        "first output operation is about to run (exact)",
        "dstream",
    ),
    CrashPoint(
        "dstream.batch.end",
        "every output operation of DStream batch N has returned; the checkpoint that marks the batch done is not "
        "written yet (exact)",
        "dstream",
    ),
)
#: Every crash point, the protocol's first and in protocol order.
ALL: tuple[CrashPoint, ...] = (*PROTOCOL, STEP, TIMED, SNAPSHOT, PURGE, *DSTREAM)
_BY_NAME = {p.name: p for p in ALL}


def point(name: str) -> CrashPoint:
    """The crash point called ``name``; ``KeyError`` naming the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"{name!r} is no crash point; known: {', '.join(_BY_NAME)}") from None


def family(kind: Family) -> dict[str, str]:
    """The points of one family, name to doc, in order."""
    return {p.name: p.doc for p in ALL if p.family == kind}


def after_commit(name: str) -> bool:
    """Whether a fault at ``name`` comes after Spark's ``commits/N`` by definition; ``False`` for what is no
    crash point (a history's nemesis or deploy entry)."""
    found = _BY_NAME.get(name)
    return found is not None and found.after_commit


def in_commit_window(name: str) -> bool:
    """Whether ``name`` is a sink's commit window (:attr:`CrashPoint.commit_window`); ``False`` for what is no
    crash point."""
    found = _BY_NAME.get(name)
    return found is not None and found.commit_window


def takes_rows(name: str) -> bool:
    """Whether a rule at ``name`` counts rows (``after_rows``) and is aimed at a partition."""
    return point(name).takes_rows


def per_task() -> tuple[str, ...]:
    """The points that fire inside a task, in protocol order."""
    return tuple(p.name for p in ALL if p.per_task)


def marking(log: Literal["offsets", "commits"]) -> str:
    """The protocol point whose moment is the appearance of ``offsets/N`` or ``commits/N``."""
    return next(p.name for p in PROTOCOL if p.marks == log)
