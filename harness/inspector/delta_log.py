"""The Delta table next to a checkpoint: does its log hold each committed batch exactly once?

A Delta sink makes a micro-batch idempotent with an application transaction: the commit that writes batch ``N``
carries ``txn(appId, N)``, and a writer that finds ``txn(appId) >= N`` in the table skips the batch. Delta's
streaming sink uses the query id (the checkpoint's ``metadata``) as appId and the batch id as version;
``foreachBatch`` writers choose ``txnAppId`` / ``txnVersion`` (pass ``--txn-app-id``). Checked here, with the
table's log read by :mod:`scenarios.delta.log` and the checkpoint by :mod:`harness.inspector.load`:

- every committed batch (``commits/N``) from the app's first txn in the log on has a Delta commit with
  ``txn(app, N)`` (``delta-batch-missing``), and no batch has two (``delta-txn-repeated``);
- the table's newest txn is not beyond the newest planned batch (``delta-txn-ahead``); equal to the newest
  planned batch that has no commit is the normal crash window (note ``delta-txn-uncommitted-batch``).

A table whose log holds no txn for the app gets one note (``delta-no-txn``), not one per batch. Batches before
the first txn the log holds (history cleaned up, or written without txn) are not checked (note
``delta-batches-unchecked``). A damaged log is one ``delta-log-corrupt`` violation and no other check.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from harness.inspector.checkpoint import CheckpointError
from harness.inspector.findings import Finding
from harness.inspector.load import CheckpointModel
from scenarios.delta.log import LOG_DIR, Commit, DeltaLogError, is_delta_table, read_log, txn_commits


@dataclass(frozen=True)
class DeltaBatchRow:
    """One batch id as the checkpoint and the Delta log see it."""

    batch_id: int
    planned: bool
    committed: bool
    #: Delta versions whose commit carries ``txn(app, batch_id)``.
    delta_versions: tuple[int, ...]
    #: False for batches before the app's first txn in the log (not checked).
    checked: bool


@dataclass(frozen=True)
class DeltaReport:
    """The Delta table's view of the checkpoint's batches, and the findings about it."""

    table: Path
    #: The txn appId checked; ``None`` when neither ``--txn-app-id`` nor a readable query id gave one.
    app_id: str | None
    #: True when the app id came from ``--txn-app-id`` (else from the checkpoint's ``metadata``).
    app_id_given: bool
    #: Oldest and newest Delta version read (``None`` when the log is unreadable).
    first_version: int | None = None
    last_version: int | None = None
    #: The version of the checkpoint the readable history starts from (older commits cleaned up), if any.
    checkpoint_version: int | None = None
    #: Other app ids whose txns the log holds (a hint when ``app_id`` has none).
    other_app_ids: tuple[str, ...] = ()
    rows: tuple[DeltaBatchRow, ...] = ()
    findings: tuple[Finding, ...] = ()
    #: Why the log could not be read (also a ``delta-log-corrupt`` finding).
    error: str | None = None


def _versions(vs: list[int]) -> str:
    """``Delta version 3`` / ``Delta versions 3 and 5`` / ``Delta versions 3, 5 and 8``."""
    if len(vs) == 1:
        return f"Delta version {vs[0]}"
    return f"Delta versions {', '.join(map(str, vs[:-1]))} and {vs[-1]}"


def _ids(ids: list[int]) -> str:
    if len(ids) == 1:
        return f"batch {ids[0]}"
    contiguous = ids == list(range(ids[0], ids[-1] + 1))
    return f"batches {ids[0]}..{ids[-1]}" if contiguous or len(ids) > 6 else "batches " + ", ".join(map(str, ids))


def _neighbours(by_txn: dict[int, list[int]], bid: int) -> str:
    below = [v for v in by_txn if v < bid]
    above = [v for v in by_txn if v > bid]
    parts = [f"txn {max(below)} is in {_versions(by_txn[max(below)])}"] if below else []
    parts += [f"txn {min(above)} in {_versions(by_txn[min(above)])}"] if above else []
    return f" ({'; '.join(parts)})" if parts else ""


def _check(
    m: CheckpointModel, log: Path, commits: list[Commit], app: str, by_txn: dict[int, list[int]]
) -> list[Finding]:
    findings: list[Finding] = []
    committed = m.commit_ids
    if not by_txn:
        if committed:
            others = sorted({a for c in commits for a, _ in c.txns})
            hint = f" (it holds txns for {', '.join(others[:5])})" if others else ""
            findings.append(
                Finding(
                    "delta-no-txn",
                    str(log),
                    f"the table has no txn for app {app}{hint}: its writes are not idempotent (a re-run batch is "
                    f"written again), or --txn-app-id is wrong; {_ids(committed)} not checked against the table",
                )
            )
        return findings
    for bid, versions in sorted(by_txn.items()):
        if len(versions) > 1:
            findings.append(
                Finding(
                    "delta-txn-repeated",
                    str(log / f"{versions[-1]:020d}.json"),
                    f"txn({app}, {bid}) is in {_versions(versions)}: batch {bid} was written to the table "
                    f"{len(versions)} times, its rows are duplicated (a writer that does not skip a txn version "
                    "the table already holds)",
                    bid,
                )
            )
    first = min(by_txn)
    start = commits[0]
    early = [b for b in committed if b < first]
    if early:
        why = (
            f"the log's history starts at checkpoint {start.version} (older commits were cleaned up)"
            if start.from_checkpoint
            else "they were written without a txn, by another writer, or never reached the table"
        )
        findings.append(
            Finding(
                "delta-batches-unchecked",
                str(log),
                f"{_ids(early)} committed before txn({app}, {first}), the first the log holds "
                f"({_versions(by_txn[first])}): {why}; not checked",
                early[0],
            )
        )
    for bid in committed:
        if bid >= first and bid not in by_txn:
            findings.append(
                Finding(
                    "delta-batch-missing",
                    str(log),
                    f"batch {bid} is committed (commits/{bid}) but no Delta commit carries txn({app}, {bid})"
                    f"{_neighbours(by_txn, bid)}: Spark never re-runs a committed batch, so batch {bid}'s rows "
                    "are lost",
                    bid,
                )
            )
    top = max(by_txn)
    planned = max(m.offset_ids + m.commit_ids, default=-1)
    if top > planned:
        where = (
            f"the checkpoint's newest planned batch {planned} (offsets/{planned})"
            if planned >= 0
            else "a checkpoint that has planned no batch yet"
        )
        skipped = _ids(list(range(planned + 1, top + 1)))
        findings.append(
            Finding(
                "delta-txn-ahead",
                str(log / f"{by_txn[top][-1]:020d}.json"),
                f"the table's newest txn({app}, {top}) ({_versions(by_txn[top])}) is beyond {where}: on restart "
                f"Spark plans {skipped} anew and a txn-aware writer skips them as already written, so their "
                "input is silently dropped (a checkpoint restored from an older copy, or another query with "
                "the same id)",
                top,
            )
        )
    last = m.last_planned
    if last is not None and last not in committed and last in by_txn:
        findings.append(
            Finding(
                "delta-txn-uncommitted-batch",
                str(log / f"{by_txn[last][-1]:020d}.json"),
                f"batch {last} is in the table (txn({app}, {last}), {_versions(by_txn[last])}) but has no "
                f"commits/{last}: the crash window between the Delta commit and the checkpoint's; on restart Spark "
                f"re-runs batch {last} and a txn-aware writer skips it",
                last,
            )
        )
    return findings


def _rows(m: CheckpointModel, by_txn: dict[int, list[int]]) -> tuple[DeltaBatchRow, ...]:
    planned, committed = set(m.offset_ids), set(m.commit_ids)
    ids = planned | committed
    low = min(ids, default=0)
    ids |= {v for v in by_txn if v >= low}
    first = min(by_txn, default=None)
    return tuple(
        DeltaBatchRow(b, b in planned, b in committed, tuple(by_txn.get(b, ())), first is not None and b >= first)
        for b in sorted(ids)
    )


def _not_a_table(root: Path) -> str:
    if not root.exists():
        return "does not exist; give the Delta table's root directory (the parent of _delta_log)"
    if root.name == LOG_DIR:
        return "is a _delta_log directory; give the table's root directory (its parent)"
    return "not a Delta table (no _delta_log with a commit file); give the table's root directory"


def inspect_delta(m: CheckpointModel, table: str | os.PathLike[str], app_id: str | None = None) -> DeltaReport:
    """Check the Delta table at ``table`` against the checkpoint ``m``; the app id defaults to the query id.

    Raises :class:`CheckpointError` only when ``table`` is not a Delta table (exit 2); a damaged log becomes
    a ``delta-log-corrupt`` finding."""
    root = Path(table).absolute()
    if not is_delta_table(root):
        raise CheckpointError(root, _not_a_table(root), "missing")
    log = root / LOG_DIR
    app = app_id if app_id is not None else m.query_id
    given = app_id is not None
    try:
        commits = read_log(root)
    except DeltaLogError as exc:
        finding = Finding(
            "delta-log-corrupt",
            exc.path,
            f"{exc.problem}: Delta readers and txn-aware writers fail on (or misread) this table; the batches "
            "were not checked against it",
        )
        return DeltaReport(root, app, given, findings=(finding,), error=exc.problem)
    base = DeltaReport(
        root,
        app,
        given,
        first_version=commits[0].version,
        last_version=commits[-1].version,
        checkpoint_version=commits[0].version if commits[0].from_checkpoint else None,
        other_app_ids=tuple(sorted({a for c in commits for a, _ in c.txns} - {app})),
    )
    if app is None:
        note = Finding(
            "delta-app-unknown",
            str(m.root / "metadata"),
            "the checkpoint has no readable query id to match the table's txns with; pass --txn-app-id",
        )
        return replace(base, rows=_rows(m, {}), findings=(note,))
    by_txn = txn_commits(commits, app)
    return replace(base, rows=_rows(m, by_txn), findings=tuple(_check(m, log, commits, app, by_txn)))
