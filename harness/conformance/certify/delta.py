"""Certify's Delta rows: what each needs, and ``sink.commit.after`` for Spark's Delta streaming sink.

- :func:`delta_missing` / :func:`deltars_missing`: why a Delta row cannot run here (the set-up's Delta jar set
  missing or built for another Spark, ``harness.spark.jars.problem("delta-spark")``; for delta-rs also the
  ``deltalake`` package), one line, else ``None``. A row that needs them is listed as skipped with that line.
- :data:`DELTA_SINK`: ``delta_sink_append`` (the replayable source -> map/filter -> ``writeStream.format("delta")``)
  with ``sink.commit.after`` among its crash points: its ``attach_sink`` starts
  :class:`scenarios.delta.commit_watch.DeltaCommitWatcher`, which reaches the window between Delta's commit of
  batch N and ``commits/N`` where no harness code runs.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable

from harness.conformance.certify.runs import Row
from scenarios.delta.commit_watch import POINT
from scenarios.library import delta_sink_append


def delta_missing() -> str | None:
    """Why no Delta run can start here (Delta's Python API or its jar set missing, or not for this pyspark), one
    line; else ``None``."""
    from harness.spark.jars import DELTA, problem, python_api_problem

    return python_api_problem(DELTA) or problem(DELTA)


def deltars_missing() -> str | None:
    """:func:`delta_missing`, or that the ``deltalake`` package (delta-rs) is not installed; else ``None``."""
    reason = delta_missing()
    if reason is None and importlib.util.find_spec("deltalake") is None:
        reason = "the deltalake package (delta-rs) is not installed in this environment: pip install deltalake"
    return reason


#: ``delta_sink_append`` under certify's name (its ``sink.commit.after`` is reached by its Delta commit watcher).
DELTA_SINK = dataclasses.replace(
    delta_sink_append.SCENARIO,
    name="certify_delta_sink",
    summary="map/filter -> Delta streaming sink, append; sink.commit.after by a watcher on the Delta log",
)


def _rows() -> tuple[Row, ...]:
    """The seven Delta rows: Spark's Delta sink, then each ``foreachBatch`` writer beside its one-bug twin."""
    points = ("sink.write.mid", POINT)
    here = "harness.conformance.certify.delta"

    def row(key: str, name: str, scenario: str, needs: Callable[[], str | None] = delta_missing) -> Row:
        return Row(key, "sink", name, points, scenario, needs=needs)

    rs = deltars_missing

    return (
        row("sink:delta", "Delta streaming sink (append)", f"{here}:DELTA_SINK"),
        row("sink:delta-foreachbatch-txn", "foreachBatch Delta append, txnAppId/txnVersion", "foreachbatch_delta_txn"),
        row("sink:delta-foreachbatch-naive", "foreachBatch Delta append, no txn options", "foreachbatch_delta_naive"),
        row("sink:delta-merge-session-txn", "foreachBatch MERGE, session txn confs", "foreachbatch_delta_merge"),
        row("sink:delta-merge-no-txn", "foreachBatch MERGE, no txn confs", "foreachbatch_delta_merge_no_txn"),
        row("sink:deltars-txn", "foreachBatch delta-rs, txn checked first", "foreachbatch_deltars_txn", rs),
        row("sink:deltars-unchecked", "foreachBatch delta-rs, txn never checked", "foreachbatch_deltars_unchecked", rs),
    )


#: The Delta rows, each a sink row with a kill in the middle of batch 0's write and one after batch 1's Delta
#: commit and before ``commits/1``; skipped (with :func:`delta_missing`'s line) without the Delta jar set.
DELTA_ROWS: tuple[Row, ...] = _rows()
