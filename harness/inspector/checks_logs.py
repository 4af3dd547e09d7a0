"""Invariants of the offsets and commits logs and the query metadata.

How Spark 4.3 restarts (``MicroBatchExecution.populateStartOffsets``) decides what
these findings mean: it takes the newest ``offsets/N`` and the newest ``commits/M``.
``M == N``: start batch ``N + 1``. ``M == N - 1``: re-run batch ``N`` with its logged
offsets. ``M < N - 1``: log a warning and run only batch ``N`` — batches in between
are never re-run. A commit missing below ``M`` is never looked at.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from harness.inspector.findings import Finding
from harness.inspector.load import CheckpointModel

_RESTART = "Spark fails when it reads this file on restart"
#: Where a broken file lives -> (what happens, what to do).
_CONSEQUENCE = {
    "offsets": (_RESTART, "if it is the newest offsets file and has no commit, deleting it lets Spark re-plan it"),
    "commits": (_RESTART, "if it is the newest commit, deleting it makes Spark re-run the batch (idempotent sinks)"),
    "sources": ("the file source fails when it reads this file on restart", "restore it from a copy of the checkpoint"),
    "sink": (
        "the file sink and every reader of the sink directory fail on this file",
        "restore it from a copy (orphan-file checks are skipped while it is unreadable)",
    ),
}
_DEFAULT = (_RESTART, "restore it from a copy of the checkpoint")


def check_metadata(m: CheckpointModel) -> Iterator[Finding]:
    if not m.metadata_exists and (m.offset_ids or m.commit_ids):
        yield Finding(
            "metadata-missing",
            str(m.root / "metadata"),
            "offsets/ and commits/ exist but the metadata file (the query id) is missing: Spark refuses to "
            "restart from this checkpoint; restore the file from a copy rather than inventing a new id",
        )


def check_read_errors(m: CheckpointModel) -> Iterator[Finding]:
    for err in m.read_errors:
        kind = "log-version" if err.kind == "version" else "log-corrupt"
        inside = m.rel(err.path)
        where = "sink" if inside == err.path and m.sink_dir else inside.split("/")[0]
        what, hint = _CONSEQUENCE.get(where, _DEFAULT)
        yield Finding(kind, err.path, f"{err.problem}. {what}; {hint}")


def _gaps(ids: list[int]) -> list[int]:
    present = set(ids)
    return [i for i in range(ids[0], ids[-1] + 1) if i not in present] if ids else []


def _span(ids: list[int]) -> str:
    return str(ids[0]) if len(ids) == 1 else f"{ids[0]}..{ids[-1]}" if len(ids) > 6 else ", ".join(map(str, ids))


def check_batch_ids(m: CheckpointModel) -> Iterator[Finding]:
    off, com = m.offset_ids, m.commit_ids
    missing = _gaps(off)
    if missing:
        yield Finding(
            "offsets-gap",
            str(m.root / "offsets"),
            f"batches {off[0]}..{off[-1]} are logged but offsets/{_span(missing)} is missing: Spark assumes ids are "
            "contiguous; the input ranges of those batches are lost and a restart that needs them fails",
            missing[0],
        )
    planned, committed = set(off), set(com)
    # Every planned batch below the newest commit needs its commit (purging removes offsets first, so a
    # missing commit below the newest one is never a purge artifact).
    for bid in off:
        if bid in committed or not com or bid > com[-1]:
            continue
        yield Finding(
            "commits-gap",
            str(m.root / "commits" / str(bid)),
            f"batch {bid} was planned (offsets/{bid}) but commits/{bid} is missing while commits/{com[-1]} exists: "
            f"Spark only looks at the newest commit, so it silently skips re-running batch {bid} — if its output "
            "never reached the sink, those rows are lost",
            bid,
        )
    first_off = off[0] if off else None
    for bid in com:
        if bid not in planned and (first_off is None or bid >= first_off):
            yield Finding(
                "commit-without-offsets",
                str(m.root / "commits" / str(bid)),
                f"commits/{bid} exists but offsets/{bid} does not: the commit records a batch whose input range is "
                "unknown — the two logs come from different runs or were partly deleted",
                bid,
            )
    yield from _uncommitted(m)
    first = min(off[:1] + com[:1]) if (off or com) else 0
    if first > 0:
        yield Finding(
            "logs-purged",
            str(m.root / "offsets"),
            f"batches before {first} were purged by Spark (spark.sql.streaming.minBatchesToRetain): their history "
            "cannot be checked",
        )


def _uncommitted(m: CheckpointModel) -> Iterator[Finding]:
    if not m.offset_ids:
        return
    last = m.offset_ids[-1]
    last_commit = m.last_committed
    committed = set(m.commit_ids)  # a corrupt commit file still counts: it is reported as log-corrupt
    for bid in m.offset_ids:
        if bid in committed or (last_commit is not None and bid < last_commit):
            continue  # committed, or a commit missing below the newest one: reported as commits-gap
        path = str(m.root / "offsets" / str(bid))
        if bid == last:
            yield Finding(
                "last-batch-uncommitted",
                path,
                f"batch {bid} is planned but not committed: Spark re-runs it on restart with the same offsets; a "
                "sink that is not idempotent per batch id may then hold its rows twice",
                bid,
            )
        else:
            yield Finding(
                "uncommitted-not-last",
                path,
                f"batch {bid} has no commit and is not the newest planned batch ({last}): on restart Spark re-runs "
                f"only batch {last}, never batch {bid} — its rows are lost if it did not finish",
                bid,
            )


def numeric_leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every numeric leaf of an offset by path (booleans excluded): ``("0", 10), ("1", 12)``."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield prefix or "offset", value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from numeric_leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(value, list | tuple):  # tuples: offsets a broken source returned, before JSON
        for i, v in enumerate(value):
            yield from numeric_leaves(v, f"{prefix}[{i}]")


def _consecutive(m: CheckpointModel) -> Iterator[tuple[int, int]]:
    ids = sorted(m.offsets)
    for a, b in itertools.pairwise(ids):
        if b == a + 1:
            yield a, b


def check_offsets(m: CheckpointModel) -> Iterator[Finding]:
    for a, b in _consecutive(m):
        prev, cur = m.offsets[a], m.offsets[b]
        path = str(m.root / "offsets" / str(b))
        if len(prev.sources) != len(cur.sources) and not cur.source_ids:
            yield Finding(
                "source-count-changed",
                path,
                f"offsets/{b} records {len(cur.sources)} source(s) but offsets/{a} records {len(prev.sources)}: Spark "
                "refuses to restart a query whose number of sources changed",
                b,
            )
            continue
        before = dict(zip(prev.source_keys(), prev.sources, strict=False))
        for key, end in zip(cur.source_keys(), cur.sources, strict=False):
            start = before.get(key)
            if start is None:
                continue
            if end is None:
                back = ["the offset disappeared ('-')"]
            elif _delta_position(start) is not None and _delta_position(end) is not None:
                back = _delta_regression(start, end)
            else:
                old = dict(numeric_leaves(start))
                back = [
                    f"{_leaf(k, start)} {old[k]:g} -> {v:g}" for k, v in numeric_leaves(end) if k in old and v < old[k]
                ]
                yield from _dropped_partitions(start, end, path, a, b)
            if back:
                yield Finding(
                    "offset-regression",
                    path,
                    f"source {key} moves backwards from offsets/{a} to offsets/{b} ({'; '.join(back[:4])}): the rows "
                    "in between are read twice (duplicates), or the log was edited",
                    b,
                )


def _delta_position(offset: Any) -> tuple[int, int] | None:
    """``(reservoirVersion, index)`` of a Delta source offset, else ``None``."""
    if isinstance(offset, dict) and isinstance(offset.get("reservoirVersion"), int):
        index = offset.get("index", -1)
        return int(offset["reservoirVersion"]), int(index) if isinstance(index, int) else -1
    return None


def _delta_regression(start: Any, end: Any) -> list[str]:
    """A Delta source offset is a position ``(reservoirVersion, index)``, compared as a pair: the index falls back
    to -1 (before the version's files) whenever the version moves on, which is progress, not a regression."""
    old, new = _delta_position(start), _delta_position(end)
    assert old is not None and new is not None
    if new >= old:
        return []
    return [f"Delta position (reservoirVersion, index) {old} -> {new}"]


def _kafka(offset: Any) -> dict[str, dict[str, Any]] | None:
    """A Kafka source offset (``{"topic": {"0": 12, "1": 5}}``), else ``None``."""
    if not isinstance(offset, dict) or not offset:
        return None
    topics: dict[str, dict[str, Any]] = {}
    for topic, parts in offset.items():
        if not isinstance(parts, dict) or not parts or not all(str(k).lstrip("-").isdigit() for k in parts):
            return None
        topics[str(topic)] = parts
    return topics


def _leaf(path: str, offset: Any) -> str:
    """A leaf's path as a reader says it: ``topic t partition 0`` for a Kafka offset, else the path."""
    if _kafka(offset) is not None and "." in path:
        topic, _, partition = path.rpartition(".")
        return f"topic {topic} partition {partition}"
    return path


def _dropped_partitions(start: Any, end: Any, path: str, a: int, b: int) -> Iterator[Finding]:
    old, new = _kafka(start), _kafka(end)
    if old is None or new is None:
        return
    for topic, parts in old.items():
        for partition, offset in parts.items():
            if topic in new and partition not in new[topic]:
                yield Finding(
                    "kafka-partition-dropped",
                    path,
                    f"topic {topic} partition {partition} is at {offset} in offsets/{a} and missing from "
                    f"offsets/{b}: its records from {offset} on are never read (was the topic deleted and "
                    "recreated with fewer partitions?)",
                    b,
                )


def check_watermarks(m: CheckpointModel) -> Iterator[Finding]:
    meaning = "rows already dropped as late or state already evicted can come back: stateful output may change"
    for a, b in _consecutive(m):
        wa, wb = m.offsets[a].watermark_ms, m.offsets[b].watermark_ms
        if wb < wa:
            yield Finding(
                "watermark-regression",
                str(m.root / "offsets" / str(b)),
                f"batchWatermarkMs goes back from {wa} (offsets/{a}) to {wb} (offsets/{b}): {meaning}",
                b,
            )
    commits = sorted(m.commits)
    for a, b in itertools.pairwise(commits):
        na, nb = m.commits[a].next_watermark_ms, m.commits[b].next_watermark_ms
        if nb < na:
            yield Finding(
                "watermark-regression",
                str(m.root / "commits" / str(b)),
                f"nextBatchWatermarkMs goes back from {na} (commits/{a}) to {nb} (commits/{b}): {meaning}",
                b,
            )
    for bid, commit in m.commits.items():
        nxt = m.offsets.get(bid + 1)
        if nxt is not None and nxt.watermark_ms < commit.next_watermark_ms:
            yield Finding(
                "watermark-regression",
                str(m.root / "offsets" / str(bid + 1)),
                f"batch {bid + 1} runs with watermark {nxt.watermark_ms} but commits/{bid} set it to "
                f"{commit.next_watermark_ms}: {meaning}",
                bid + 1,
            )


def check_conf(m: CheckpointModel) -> Iterator[Finding]:
    seen: set[str] = set()
    for a, b in _consecutive(m):
        ca, cb = m.offsets[a].conf, m.offsets[b].conf
        for key in sorted(set(ca) & set(cb)):
            if ca[key] != cb[key] and key not in seen:
                seen.add(key)
                yield Finding(
                    "conf-changed",
                    str(m.root / "offsets" / str(b)),
                    f"{key} is {ca[key]!r} in offsets/{a} but {cb[key]!r} in offsets/{b}: Spark pins this value for "
                    "the life of the checkpoint, so the log was edited or another query wrote here; state partitioned "
                    "under the old value can be lost or misrouted",
                    b,
                )


CHECKS = (check_metadata, check_read_errors, check_batch_ids, check_offsets, check_watermarks, check_conf)
