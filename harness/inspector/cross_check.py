"""Spark's state readers against the inspector's own reading of the same checkpoint (``inspect --state``).

The inspector reads state file names and metadata files; Spark's ``state-metadata`` and ``statestore`` readers
read the same checkpoint through Spark. Where both state a fact (operators, names, partitions, the newest batch
and version, stores, partitions holding rows), they must agree: a disagreement means one of them misreads the
checkpoint, or the checkpoint holds something Spark would not load as the files suggest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.inspector.load import CheckpointModel
    from harness.inspector.spark_view import SparkStateView


@dataclass(frozen=True)
class CrossCheck:
    """Spark's readers against the inspector's own reading of the same files: each fact both can state, in words.
    ``skipped`` says why nothing could be compared (a reader failed or the query is stateless)."""

    agree: tuple[str, ...] = ()
    disagree: tuple[str, ...] = ()
    skipped: str | None = None
    #: Readers that failed for part of the state (its facts are not compared), with their errors.
    not_compared: tuple[str, ...] = ()


def cross_check(view: SparkStateView, model: CheckpointModel) -> CrossCheck:
    """Compare, per operator: that both know it, its name, its partition count, its newest batch against the
    newest commit and the newest state version on disk, its store names, and that every partition Spark reads rows
    from has a directory of state files. A fact Spark's readers could not state is left out; no fact at all is
    ``skipped`` with the readers' error."""
    if not view.operators:
        reason = "; ".join(view.errors) or "Spark's state-metadata reader listed no operator"
        return CrossCheck(skipped=reason)
    agree: list[str] = []
    disagree: list[str] = []

    def fact(ok: bool, text: str) -> None:
        (agree if ok else disagree).append(text)

    files = {op.operator_id: op for op in model.state}
    newest_commit = model.commit_ids[-1] if model.commit_ids else None
    seen: set[int] = set()
    for meta in view.operators:
        op_id = int(meta["operatorId"])
        seen.add(op_id)
        op = files.get(op_id)
        if op is None:
            fact(False, f"operator {op_id}: Spark lists it, no state/{op_id}/ directory holds it")
            continue
        name, parts, max_batch = meta.get("operatorName"), meta.get("numPartitions"), meta.get("maxBatchId")
        if op.name is not None and name is not None:
            fact(op.name == name, f"operator {op_id} name: Spark {name}, metadata file {op.name}")
        if parts is not None:
            on_disk = op.num_partitions if op.num_partitions is not None else len(op.partition_ids)
            fact(int(parts) == on_disk, f"operator {op_id} partitions: Spark {parts}, files {on_disk}")
        if max_batch is not None and newest_commit is not None:
            text = f"operator {op_id} newest batch: Spark {max_batch}, commits/{newest_commit}"
            fact(int(max_batch) == newest_commit, text)
        newest = op.max_version()
        if max_batch is not None and newest is not None:
            text = f"operator {op_id} newest state version: Spark {int(max_batch) + 1}, files {newest}"
            fact(newest == int(max_batch) + 1, text)
        store = str(meta.get("stateStoreName") or "default")
        names = {s.store_name for s in op.stores}
        fact(store in names, f"operator {op_id} store {store}: on disk {', '.join(sorted(names)) or 'none'}")
    for op_id in sorted(set(files) - seen):
        fact(False, f"operator {op_id}: state/{op_id}/ is on disk, Spark's state-metadata does not list it")
    for read in view.stores:
        op = files.get(read.operator_id)
        with_rows = {p for p, n in read.rows_per_partition.items() if n}
        missing = sorted(with_rows - set(op.partition_ids)) if op is not None else sorted(with_rows)
        fact(
            not missing,
            f"operator {read.operator_id} store {read.store_name}: Spark reads rows from partition(s) "
            f"{', '.join(map(str, sorted(with_rows))) or 'none'}"
            + (f"; no state files for {', '.join(map(str, missing))}" if missing else ", each with state files"),
        )
    return CrossCheck(tuple(agree), tuple(disagree), not_compared=view.errors)


def render_cross_check(check: CrossCheck) -> str:
    if check.skipped:
        return f"cross-check with the inspector's reading of the files: skipped ({check.skipped})"
    lines = [f"cross-check with the inspector's reading of the files: {len(check.agree)} agree, "
             f"{len(check.disagree)} disagree"]  # fmt: skip
    lines += [f"  DISAGREE {d}" for d in check.disagree]
    lines += [f"  not compared (a reader failed): {e}" for e in check.not_compared]
    return "\n".join(lines)
