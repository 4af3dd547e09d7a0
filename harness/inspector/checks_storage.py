"""Invariants of the state store, checksum sidecars, file-source logs and the file sink."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from harness.inspector.findings import Finding
from harness.inspector.load import CheckpointModel
from harness.inspector.sinklog import uri_to_path


def _shuffle_partitions(m: CheckpointModel) -> int | None:
    for bid in sorted(m.offsets, reverse=True):
        value = m.offsets[bid].conf.get("spark.sql.shuffle.partitions")
        if value is not None and value.isdigit():
            return int(value)
    return None


def check_state(m: CheckpointModel) -> Iterator[Finding]:
    last_commit, last_planned = m.last_committed, m.last_planned
    limit = last_planned + 1 if last_planned is not None else 0
    for op in m.state:
        expected = op.num_partitions or _shuffle_partitions(m)
        if last_commit is not None and expected and len(op.partition_ids) != expected:
            yield Finding(
                "state-partitions-mismatch",
                str(op.directory),
                f"operator {op.operator_id} has {len(op.partition_ids)} partition directories but runs with {expected} "
                "partitions: the state of the missing partitions is lost (their keys restart from empty state)",
            )
        for store in op.stores:
            where = f"operator {op.operator_id} partition {store.partition_id} store {store.store_name}"
            if last_commit is not None and not any(f.unique_id for f in store.files):
                why = store.loadable(last_commit + 1)
                if why:
                    yield Finding(
                        "state-version-missing",
                        str(store.directory),
                        f"{where}: {why}; batch {last_commit} is committed, so a restart needs that version: Spark "
                        "fails to load it (or, rebuilt from less, aggregates and dedup state are wrong)",
                        last_commit,
                    )
            top = max(store.versions, default=None)
            if top is not None and top > limit:
                newest = f"the newest planned batch is {last_planned}" if last_planned is not None else "no batch"
                yield Finding(
                    "state-ahead",
                    str(store.directory),
                    f"{where} has state version {top} but {newest} (which writes version {limit}): state and logs "
                    "come from different points in time (a partial copy or restore); the next run trips over or "
                    "overwrites it",
                    top - 1,
                )
    yield from _unique_ids(m)


def _unique_ids(m: CheckpointModel) -> Iterator[Finding]:
    last = m.last_committed
    commit = m.commits.get(last) if last is not None else None
    if last is None or commit is None or not commit.state_unique_ids:
        return
    by_op = {op.operator_id: op for op in m.state}
    for op_key, partitions in commit.state_unique_ids.items():
        op = by_op.get(int(op_key)) if str(op_key).isdigit() else None
        for part, ids in enumerate(partitions or []):
            have = {f.unique_id for s in (op.stores if op else ()) if s.partition_id == part for f in s.files} - {None}
            for uid in ids or []:
                if uid not in have:
                    yield Finding(
                        "state-unique-id-missing",
                        str(m.root / "state" / str(op_key) / str(part)),
                        f"commits/{last} names state version {last + 1} with id {uid} for operator {op_key} partition "
                        f"{part}, but no {last + 1}_{uid}.zip/.changelog exists: the restart cannot load this state",
                        last,
                    )


def check_checksums(m: CheckpointModel) -> Iterator[Finding]:
    # An orphan sink file is usually a write killed mid-way, sidecar included: the orphan finding covers it.
    orphans = {os.path.realpath(p) for p in sink_orphans(m)}
    for r in m.checksums.mismatches:
        if os.path.realpath(r.main) in orphans:
            continue
        yield Finding(
            "crc-mismatch",
            str(r.main),
            f"{r.problem} (checked against {r.sidecar.name}): the file was edited, truncated or corrupted after Spark "
            "wrote it; Spark does not verify this checksum and would use the changed content silently",
        )
    for p in m.checksums.orphans:
        yield Finding("crc-orphan", str(p), "checksum sidecar without its file (a deleted file's leftover; harmless)")
    for p in m.checksums.temp_files:
        yield Finding(
            "temp-file",
            str(p),
            "leftover temp file of an atomic write interrupted by a crash; Spark ignores it and it is safe to delete",
        )


def check_sources(m: CheckpointModel) -> Iterator[Finding]:
    if not m.offsets:
        return
    last = max(m.offsets)
    entry = m.offsets[last]
    for key, offset in zip(entry.source_keys(), entry.sources, strict=False):
        if not (isinstance(offset, dict) and set(offset) == {"logOffset"} and isinstance(offset["logOffset"], int)):
            continue
        log_offset = offset["logOffset"]
        log = m.sources.get(key)
        if log is None or not log.covers(log_offset):
            yield Finding(
                "source-log-missing",
                str(m.root / "sources" / key / str(log_offset)),
                f"offsets/{last} says file source {key} is at logOffset {log_offset} but that source-log entry is "
                "missing: Spark cannot tell which files the batch read, so a restart fails or re-reads files",
                last,
            )


def check_sink(m: CheckpointModel) -> Iterator[Finding]:
    if m.sink_dir is None:
        return
    if m.sink is None:
        yield Finding(
            "sink-not-file-sink",
            str(m.sink_dir),
            "no _spark_metadata log here, so this is not a file sink's output directory; sink checks skipped",
        )
        return
    log = m.sink.log
    listed_by: dict[str, int] = {}
    for bid in sorted(log.batches):
        for e in log.batches[bid].entries:
            listed_by.setdefault(str(e.get("path")), bid)
    live, foreign = _live(m)
    for e in log.live_entries():
        path = uri_to_path(str(e.get("path")))
        if path is None:
            continue  # a remote file system: cannot check from here
        listed = listed_by.get(str(e.get("path")))
        yield from _entry(
            e, path, str(log.directory / str(listed)) if listed is not None else str(log.directory), listed
        )
    if foreign:
        yield Finding(
            "sink-path-foreign",
            str(log.directory),
            f"{len(foreign)} file(s) the sink log lists are outside {m.sink_dir} (e.g. {foreign[0]}): the directory "
            "was copied or moved; Spark readers of it read those absolute paths and ignore the files here",
        )
    for f in _orphans(m, live, foreign):
        yield Finding(
            "sink-orphan-file",
            str(f),
            "data file not listed by _spark_metadata: invisible to readers that use the sink log (a batch attempt "
            "that died before committing), so not a duplicate there — but disk waste, and readers that list the "
            "directory without the log would see its rows",
        )
    yield from _sink_batches(m, log.directory)


def _live(m: CheckpointModel) -> tuple[set[str], list[Path]]:
    """Real paths of the sink's live files, and those of them outside the sink directory."""
    assert m.sink is not None and m.sink_dir is not None
    root = os.path.realpath(m.sink_dir)
    live: set[str] = set()
    foreign: list[Path] = []
    for e in m.sink.log.live_entries():
        path = uri_to_path(str(e.get("path")))
        if path is not None:
            real = os.path.realpath(path)
            live.add(real)
            if not real.startswith(root + os.sep):
                foreign.append(path)
    return live, foreign


def _orphans(m: CheckpointModel, live: set[str], foreign: list[Path]) -> list[Path]:
    assert m.sink is not None
    if m.sink.log.unreadable:
        return []  # which data files an unreadable log file lists is unknown: no orphan verdicts
    # Part-file names carry a UUID, so a copied directory's files still match their entries by name.
    names = {p.name for p in foreign}
    return [f for f in m.sink.files if os.path.realpath(f) not in live and f.name not in names]


def sink_orphans(m: CheckpointModel) -> list[Path]:
    """Data files in the sink directory that no live sink-log entry names."""
    return _orphans(m, *_live(m)) if m.sink is not None else []


def _entry(e: dict[str, object], path: Path, src: str, bid: int | None) -> Iterator[Finding]:
    if not path.exists():
        yield Finding(
            "sink-file-missing",
            src,
            f"lists {path} but the file does not exist: readers of the sink fail with FileNotFoundException "
            "(or, ignoring missing files, silently lose its rows)",
            bid,
        )
    elif not e.get("isDir") and isinstance(e.get("size"), int) and path.stat().st_size != e["size"]:
        yield Finding(
            "sink-file-size",
            src,
            f"lists {path} with {e['size']} bytes but the file has {path.stat().st_size}: it was replaced or "
            "truncated after the batch committed; readers see different rows than the batch wrote",
            bid,
        )


def _sink_batches(m: CheckpointModel, log_dir: Path) -> Iterator[Finding]:
    assert m.sink is not None
    log = m.sink.log
    planned, committed = set(m.offset_ids), set(m.commit_ids)
    last_planned = m.last_planned
    for bid in m.commit_ids:
        if not log.covers(bid):
            yield Finding(
                "sink-batch-missing",
                str(log_dir / str(bid)),
                f"batch {bid} is committed (commits/{bid}) but the sink log has no entry for it: whatever it wrote is "
                "invisible to readers — those rows are lost",
                bid,
            )
    for bid in log.ids:
        if last_planned is None or bid > last_planned:
            yield Finding(
                "sink-ahead",
                str(log_dir / str(bid)),
                f"the sink log records batch {bid} but the checkpoint never planned it: the sink was written by "
                f"another query or the checkpoint was reset; Spark's file sink will silently SKIP batches up to {bid} "
                "from this checkpoint — data loss",
                bid,
            )
        elif bid in planned and bid not in committed and (m.last_committed is None or bid > m.last_committed):
            yield Finding(
                "sink-uncommitted-batch",
                str(log_dir / str(bid)),
                f"the sink recorded batch {bid} but commits/{bid} is missing: on restart Spark re-runs it and the "
                "file sink skips it (already in its log) — exactly-once holds",
                bid,
            )


CHECKS = (check_state, check_checksums, check_sources, check_sink)
