"""The inspector's entry points: a typed report of a checkpoint, and a short summary.

``inspect_checkpoint`` is what the CLI and the harness's own checkers call;
``summarize`` is the never-raising text the runner attaches to a failed run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from harness.inspector import checks_logs, checks_storage
from harness.inspector.checkpoint import CheckpointError
from harness.inspector.delta_log import DeltaReport, inspect_delta
from harness.inspector.findings import Finding
from harness.inspector.load import CheckpointModel, load_checkpoint
from harness.inspector.timeline import TimelineRow, build_timeline, span_text

ALL_CHECKS = checks_logs.CHECKS + checks_storage.CHECKS


def run_checks(model: CheckpointModel) -> list[Finding]:
    """Every invariant check over ``model``, in a stable order."""
    return [f for check in ALL_CHECKS for f in check(model)]


@dataclass(frozen=True)
class InspectionReport:
    """A checkpoint's model, its timeline and every finding (the Delta table's included, when one was given)."""

    model: CheckpointModel
    timeline: tuple[TimelineRow, ...]
    findings: tuple[Finding, ...]
    #: The Delta table checked against the checkpoint (``--delta``), if any.
    delta: DeltaReport | None = None

    @property
    def violations(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.is_violation)

    @property
    def notes(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.is_violation)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def exit_code(self) -> int:
        """0 when every invariant holds, 1 otherwise (2 is for input that cannot be read)."""
        return 0 if self.ok else 1

    def headline(self) -> str:
        """One line: the verdict, the query id and the batch counts."""
        m = self.model
        qid = m.query_id or "unknown"
        counts = f"{len(m.offset_ids)} planned, {len(m.commit_ids)} committed"
        if self.ok:
            return f"checkpoint OK: query {qid}, {counts} batch(es), every invariant holds"
        ids = sorted({f.id for f in self.violations})
        return f"checkpoint INCONSISTENT: {len(self.violations)} violation(s) ({', '.join(ids)}); query {qid}, {counts}"


def inspect_checkpoint(
    checkpoint: str | os.PathLike[str],
    sink_dir: str | os.PathLike[str] | None = None,
    verify_checksums: bool = True,
    delta_table: str | os.PathLike[str] | None = None,
    txn_app_id: str | None = None,
) -> InspectionReport:
    """Read and check ``checkpoint`` (plus the file sink at ``sink_dir`` and the Delta table at ``delta_table``,
    whose txns are matched by ``txn_app_id``, default the query id).

    Raises :class:`CheckpointError` only when the input cannot be inspected (not a
    checkpoint, not a Delta table, a file the OS refuses to read); broken contents become findings.
    ``txn_app_id`` without ``delta_table`` is a :class:`ValueError`."""
    if txn_app_id is not None and delta_table is None:
        raise ValueError("txn_app_id applies only with delta_table")
    model = load_checkpoint(checkpoint, sink_dir, verify_checksums)
    delta = inspect_delta(model, delta_table, txn_app_id) if delta_table is not None else None
    findings = tuple(run_checks(model)) + (delta.findings if delta is not None else ())
    return InspectionReport(model, tuple(build_timeline(model)), findings, delta)


def summarize(
    checkpoint_dir: str | os.PathLike[str], sink_dir: str | os.PathLike[str] | None = None, tail: int = 5
) -> str:
    """A short multi-line text for a run report: headline, the last ``tail`` batches
    of the timeline, then every violation (at most 8 per id); a DStream checkpoint's own report. Never raises."""
    from harness.inspector.dstream import inspect_dstream, is_dstream_checkpoint, render_dstream

    try:
        if is_dstream_checkpoint(os.fspath(checkpoint_dir)):
            return render_dstream(inspect_dstream(os.fspath(checkpoint_dir)))
        report = inspect_checkpoint(checkpoint_dir, sink_dir)
    except CheckpointError as exc:
        return f"checkpoint inspector: cannot read {exc.path}: {exc.problem}"
    except Exception as exc:  # a summary must never break the report it is attached to
        return f"checkpoint inspector failed on {checkpoint_dir}: {type(exc).__name__}: {exc}"
    lines = [report.headline()]
    rows = report.timeline[-tail:] if tail > 0 else ()
    if rows:
        lines.append(f"last {len(rows)} batch(es):")
    for row in rows:
        srcs = "; ".join(span_text(s) for s in row.sources) or "-"
        wm = f" wm={row.watermark_ms}" if row.watermark_ms else ""
        sink = f" sink+{row.sink_files_added}" if row.sink_files_added is not None else ""
        lines.append(f"  {row.batch_id:>5} {row.status:<11} {srcs}{wm}{sink}")
    shown: dict[str, int] = {}
    for f in report.violations:
        shown[f.id] = shown.get(f.id, 0) + 1
        if shown[f.id] <= 8:
            lines.append("  " + f.line())
    lines += [f"  ... and {n - 8} more [{fid}]" for fid, n in shown.items() if n > 8]
    return "\n".join(lines)
