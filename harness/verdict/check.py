"""From a finished run directory to a verdict: batch spans out of the
checkpoint, oracle files out of ``oracle/``, faults out of the history, into
the pure checker."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.inspector import CheckpointError, read_batches, read_source_logs
from harness.verdict.checker import Anomaly, BatchSpan, CheckResult, FaultRef, _norm, check_exactly_once
from harness.verdict.dstream_marks import dstream_spans, name_dstream, read_dstream
from harness.verdict.multiset import rows_to_check
from harness.verdict.sink_versions import BATCHES_FILE, name_versions
from scenarios.admission import offsets_from_json
from scenarios.filedir import parse_name

if TYPE_CHECKING:
    import pyarrow as pa

#: ``oracle/`` file of a run whose source adds no provenance columns: the identity columns of every row each
#: batch read, and the batch id in :data:`INPUT_BATCH_COLUMN` (written by the driver's ``check``).
INPUT_BATCHES = "input_batches.parquet"
INPUT_BATCH_COLUMN = "__batch_id"


def batch_spans(checkpoint: str | os.PathLike[str], source: int = 0) -> list[BatchSpan]:
    """Per planned batch, the replayable source's ``[start, end)`` offsets
    (source number ``source`` of the query), or for Spark's file source over files the harness
    published, the ranges of the files its log lists for the batch (:func:`file_source_spans`).
    Raises ``CheckpointError``."""
    records = read_batches(checkpoint)
    logged = [r.offsets.sources[source] for r in records if r.offsets is not None and len(r.offsets.sources) > source]
    if any(isinstance(o, dict) and "logOffset" in o for o in logged):
        return file_source_spans(checkpoint, records, source)
    if logged and all(single_topic(o) is not None for o in logged if o is not None):
        return kafka_spans(checkpoint, records, source)
    spans = []
    for rec in records:
        if rec.offsets is None or len(rec.offsets.sources) <= source or rec.offsets.sources[source] is None:
            continue
        start = rec.start[source] if len(rec.start) > source and rec.start[source] is not None else {}
        end = rec.offsets.sources[source]
        try:
            spans.append(BatchSpan(rec.batch_id, offsets_from_json(start), offsets_from_json(end), rec.committed))
        except ValueError:
            continue  # not the replayable source's {"<partition>": n} offsets (rate, file source): no provenance

    return spans


def single_topic(raw: Any) -> dict[int, int] | None:
    """``{partition: offset}`` of a Kafka source offset over one topic (``{"topic": {"0": 12}}``), else ``None``."""
    from scenarios.kafka.offsets import kafka_offsets

    if not isinstance(raw, Mapping) or len(raw) != 1:
        return None
    return kafka_offsets(raw, next(iter(raw)))


def kafka_spans(checkpoint: str | os.PathLike[str], records: Sequence[Any], source: int = 0) -> list[BatchSpan]:
    """Spans of a query over Spark's Kafka source (one topic): batch N reads ``[offsets/N-1, offsets/N)`` per
    Kafka partition; batch 0 starts where the source recorded its start (``sources/<source>/0``), a partition
    it did not know then at 0. Kafka partitions and offsets are the rows' provenance (:mod:`scenarios.kafka`)."""
    from scenarios.kafka.offsets import initial_offsets

    initial = single_topic(initial_offsets(Path(checkpoint), source)) or {}
    spans = []
    for rec in records:
        if rec.offsets is None or len(rec.offsets.sources) <= source:
            continue
        end = single_topic(rec.offsets.sources[source])
        if end is None:
            continue
        before = rec.start[source] if len(rec.start) > source and rec.start[source] is not None else None
        start = single_topic(before) if before is not None else initial
        spans.append(BatchSpan(rec.batch_id, {p: (start or {}).get(p, 0) for p in end}, end, rec.committed))
    return spans


def file_source_spans(checkpoint: str | os.PathLike[str], records: Sequence[Any], source: int = 0) -> list[BatchSpan]:
    """Spans of a file-source query. Query batch N logs ``{"logOffset": L}``; the files it read are the entries
    of the file source's own log (``sources/<source>/``) numbered ``(L', L]``, where ``L'`` is the previous
    batch's ``logOffset`` (the two numberings drift apart when Spark runs a batch without new files). The name
    of a file the harness published is its partition and offset range (:mod:`scenarios.filedir`); other files
    are skipped (no provenance). ``records`` are the checkpoint's :func:`read_batches`."""
    log = read_source_logs(checkpoint).get(str(source))
    if log is None:
        return []
    by_log: dict[int, list[tuple[int, int, int]]] = {}
    for entry in (e for lb in log.batches.values() for e in lb.entries):
        parsed = parse_name(str(entry.get("path", "")))
        if parsed is not None and isinstance(entry.get("batchId"), int):
            by_log.setdefault(entry["batchId"], []).append(parsed)
    spans, previous = [], -1
    for rec in records:
        if rec.offsets is None or len(rec.offsets.sources) <= source:
            continue
        offset = rec.offsets.sources[source]
        current = offset.get("logOffset") if isinstance(offset, dict) else None
        if not isinstance(current, int):
            continue
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for log_id in range(previous + 1, current + 1):
            for partition, lo, hi in by_log.get(log_id, ()):
                start[partition] = min(start.get(partition, lo), lo)
                end[partition] = max(end.get(partition, hi), hi)
        previous = max(previous, current)
        if end:
            spans.append(BatchSpan(rec.batch_id, start, end, rec.committed))
    return spans


def batches_json(checkpoint: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """:func:`batch_spans` as JSON-ready dicts; ``[]`` when the checkpoint is unreadable."""
    try:
        spans = batch_spans(checkpoint)
        if not spans:  # a source whose offsets name no partitions (Delta, rate): the batches, without ranges
            spans = [BatchSpan(r.batch_id, {}, {}, r.committed) for r in read_batches(checkpoint) if r.offsets]
    except (CheckpointError, ValueError):
        return []
    return [{"batch_id": s.batch_id, "start": s.start, "end": s.end, "committed": s.committed} for s in spans]


def check_run_dir(
    oracle_dir: str | os.PathLike[str],
    checkpoint: str | os.PathLike[str],
    faults: Iterable[Mapping[str, Any]] = (),
    identity: Sequence[str] = ("partition", "offset", "seq"),
) -> CheckResult:
    """Check ``oracle_dir/{expected,observed}.parquet`` with batches from
    ``checkpoint`` and ``faults`` (history records with ``history_index``,
    ``batch``, ``point``, ``description``). Never raises: unreadable input is
    an ``unknown`` verdict."""
    import pyarrow.parquet as pq

    oracle = Path(oracle_dir)
    try:
        tables = pq.read_table(oracle / "expected.parquet"), pq.read_table(oracle / "observed.parquet")
        dstream = read_dstream(oracle)  # a DStream run: no offset log; the rounds' files are the batches
        spans = batch_spans(checkpoint) if dstream is None else dstream_spans(dstream)
    except (OSError, CheckpointError, ValueError, KeyError) as exc:
        return CheckResult("unknown", error=f"could not read the run's output or checkpoint: {exc}")
    refs = [FaultRef(f["history_index"], f["batch"], f["point"], f["description"]) for f in faults]
    result = check_tables(
        *tables, identity, batches=spans, faults=refs, checkpoint_anomalies=checkpoint_anomalies(checkpoint, refs)
    )
    if (oracle / INPUT_BATCHES).exists() and result.anomalies:
        try:
            result.anomalies = locate_by_input(
                result.anomalies, pq.read_table(oracle / INPUT_BATCHES), read_batches(checkpoint), refs
            )
        except (OSError, CheckpointError, ValueError) as exc:
            result.error = f"anomalies not located: {oracle / INPUT_BATCHES} or the checkpoint is unreadable ({exc})"
    if dstream is not None:
        result.anomalies = name_dstream(result.anomalies, dstream)
    try:
        result.anomalies = name_versions(result.anomalies, oracle, identity)
    except (OSError, ValueError, KeyError) as exc:
        result.error = f"anomalies not named by table version: {oracle / BATCHES_FILE} is unreadable ({exc})"
    return result


def locate_by_input(
    anomalies: Sequence[Anomaly], input_batches: pa.Table, records: Sequence[Any], faults: Sequence[FaultRef]
) -> list[Anomaly]:
    """Name the batch of each anomaly no provenance located: the one batch whose input rows hold the anomaly's
    identity values (``input_batches``: identity columns + ``INPUT_BATCH_COLUMN``, see
    :meth:`harness.sources.PythonSource.input_batches`), with that batch's source offsets as
    ``offset_range["source"] = [start, end]`` (JSON text; the first batch starts at ``initialOffset()``) and the
    fault that preceded it; a duplicate or phantom row of a batch the checkpoint never committed is also reported
    ``uncommitted-visible``, as for located rows. An identity read by several batches (a group key) stays
    unlocated: no one batch explains it."""
    import dataclasses
    import json

    names = [c for c in input_batches.column_names if c != INPUT_BATCH_COLUMN]
    batches_of: dict[tuple[Any, ...], set[int]] = {}
    cols = [input_batches.column(c).to_pylist() for c in names]
    for i, batch_id in enumerate(input_batches.column(INPUT_BATCH_COLUMN).to_pylist()):
        batches_of.setdefault(tuple(_norm(col[i]) for col in cols), set()).add(batch_id)
    offsets = {
        r.batch_id: [
            "initialOffset()" if not r.start or r.start[0] is None else json.dumps(r.start[0]),
            json.dumps(r.offsets.sources[0]),
        ]
        for r in records
        if r.offsets is not None and r.offsets.sources
    }
    uncommitted = {r.batch_id for r in records if r.offsets is not None and not r.committed}
    out = []
    for a in anomalies:
        key = tuple(
            _norm(a.row.get(c)) for c in names
        )  # the checker's rows hold normalised values (timestamps as text)
        found = batches_of.get(key, set()) if a.batch_id is None and a.row else set()
        if len(found) != 1:
            out.append(a)
            continue
        (batch,) = found
        before = [f for f in faults if f.batch_id is not None and f.batch_id <= batch]
        fault = max(before, key=lambda f: (f.batch_id, f.history_index)) if before else a.fault
        rng = {"source": offsets[batch]} if batch in offsets else None
        located = dataclasses.replace(a, batch_id=batch, offset_range=rng, fault=fault)
        out.append(located)
        if a.kind in ("duplicate", "phantom") and batch in uncommitted:  # rows of a batch never committed
            out.append(dataclasses.replace(located, kind="uncommitted-visible"))
    return out


def check_tables(
    expected: pa.Table,
    observed: pa.Table,
    identity: Sequence[str],
    *,
    batches: Sequence[BatchSpan] = (),
    faults: Sequence[FaultRef] = (),
    checkpoint_anomalies: Sequence[Anomaly] = (),
) -> CheckResult:
    """:func:`check_exactly_once` of two Arrow tables; only the rows of identities whose counts differ reach
    Python (:func:`harness.verdict.multiset.rows_to_check`). Never raises: a failed comparison is ``unknown``."""
    try:
        exp, obs, totals = rows_to_check(expected, observed, identity)
    except Exception as exc:
        return CheckResult("unknown", error=f"could not compare the run's rows: {exc!r}")
    return check_exactly_once(
        exp,
        obs,
        batches=batches,
        faults=faults,
        identity=identity,
        checkpoint_anomalies=checkpoint_anomalies,
        totals=totals,
    )


def checkpoint_anomalies(checkpoint: str | os.PathLike[str], faults: Sequence[FaultRef] = ()) -> list[Anomaly]:
    """``offset-regression`` anomalies from the inspector: offsets that move
    backwards make Spark re-read rows (or skip them) without any error."""
    from harness.inspector import inspect_checkpoint

    try:
        report = inspect_checkpoint(checkpoint, verify_checksums=False)
    except CheckpointError:
        return []
    out = []
    for f in report.violations:
        if f.id != "offset-regression":
            continue
        before = [x for x in faults if f.batch_id is None or x.batch_id <= f.batch_id]
        out.append(
            Anomaly(
                kind="offset-regression",
                batch_id=f.batch_id,
                partition=None,
                offset=None,
                seq=None,
                expected_count=0,
                observed_count=0,
                row={},
                detail=f.line(),
                fault=max(before, key=lambda x: x.history_index) if before else None,
            )
        )
    return out
