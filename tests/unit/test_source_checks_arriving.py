"""Source checks that tell a source whose data arrives by itself from one that counts from zero (no Spark):
an answer that depends on the reader or on how often it was asked is a note (never a failure, whatever the
end-to-end run shows), a reader restarted far in must not fall behind its ``start``, Spark's
``ReadAllAvailable`` default means no admission check, and a logged batch behind its predecessor is named."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.admission import require_admission_control

require_admission_control()

from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import ReadLimit

from examples.connectors import counts_from_zero, latest_offset_from_zero
from examples.connectors._jsonl import log_context
from examples.connectors.rate_like_source import RateLikeReader, RateLikeSource
from harness.conformance.results import CheckOutcome, ConformanceReport
from harness.conformance.source.e2e import BEHIND_ID, behind_result, offsets_behind
from harness.conformance.source.suite import E2E_ID, check_source, consequences

META = '{"batchWatermarkMs":0,"batchTimestampMs":0,"conf":{}}'


def run(cls: type[Any], tmp_path: Path, options: dict[str, str] | None = None, ctx: Any = None) -> ConformanceReport:
    return check_source(cls, options or {}, ctx, workdir=tmp_path, end_to_end=False, echo=lambda m: None)


def statuses(report: ConformanceReport) -> dict[str, str]:
    return {c.id: c.status for c in report.checks}


def test_rate_like_source_fails_no_check(tmp_path: Path) -> None:
    start = str(time.time_ns() // 1_000_000 - 60_000)  # a minute of rows already arrived
    report = run(RateLikeSource, tmp_path, {"startMs": start, "rowsPerSecond": "1000"})
    st = statuses(report)
    assert report.failed == [], report.render_text()
    assert st["latest-offset-stable"] in ("pass", "note") and st["admission-control"] == "skip"
    assert st["latest-offset-monotonic"] == st["read-cross-process"] == st["read-repeatable"] == "pass"


class AlwaysMoving(RateLikeReader):
    """Correct (within one process): every latestOffset call sees 10 rows more, whichever reader asks."""

    calls = 0

    def __init__(self, options: Any) -> None:
        self.start_ms, self.per_s = 0, 1000

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        AlwaysMoving.calls += 1
        return {"rows": 10 * AlwaysMoving.calls}


class AlwaysMovingSource(RateLikeSource):
    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return AlwaysMoving(self.options)


def test_offsets_that_only_move_forward_are_a_note_and_explained(tmp_path: Path) -> None:
    report = run(AlwaysMovingSource, tmp_path)
    stable = report.by_id("latest-offset-stable")
    assert stable.status == "note", report.render_text()
    assert "how often it was asked" in stable.summary and "not measured" in stable.summary
    assert any("same reader, called twice" in d for d in stable.details)
    assert report.exit_code == 0


class PerInstance(RateLikeReader):
    """Broken: counts latestOffset calls of this reader instance from zero (a restart starts again)."""

    def __init__(self, options: Any) -> None:
        self.start_ms, self.per_s, self.calls = 0, 1000, 0

    def latestOffset(self, start: dict[str, int], limit: ReadLimit) -> dict[str, int]:
        self.calls += 1
        return {"rows": 10 * self.calls}


class PerInstanceSource(RateLikeSource):
    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return PerInstance(self.options)


def test_counting_from_zero_per_reader_falls_behind_a_restart_far_in(tmp_path: Path) -> None:
    """One step in, a fresh reader's count equals the checkpoint; 8 calls in it is behind its ``start``: the
    contract check fails; the habit check only notes that answers differ between readers."""
    report = run(PerInstanceSource, tmp_path)
    mono = report.by_id("latest-offset-monotonic")
    assert mono.status == "fail", report.render_text()
    assert any("after a restart from the offset reached 5 advances later" in d for d in mono.details), mono.details
    assert any('{"rows": 80} -> {"rows": 10}' in d for d in mono.details), mono.details
    assert report.by_id("latest-offset-stable").status == "note"  # a habit: the contract check says what is wrong
    assert [c.id for c in report.failed] == ["latest-offset-monotonic"]


def test_counts_from_zero_per_process_only_notes_without_spark(tmp_path: Path) -> None:
    """The per-process counter moves forward in one process: the Spark-free checks cannot see the restart."""
    counts_from_zero.CountingReader.polls = 0
    report = run(counts_from_zero.CountsFromZeroSource, tmp_path)
    assert statuses(report)["latest-offset-stable"] == "note" and report.failed == [], report.render_text()


def test_restarts_from_zero_with_a_context_fails_the_contract_check(tmp_path: Path) -> None:
    report = run(latest_offset_from_zero.RestartsFromZeroSource, tmp_path, ctx=log_context)
    assert statuses(report)["latest-offset-monotonic"] == "fail"
    assert statuses(report)["latest-offset-stable"] == "note"


def test_rate_like_source_without_start_is_refused_with_the_option_named(tmp_path: Path) -> None:
    report = run(RateLikeSource, tmp_path)
    assert "startMs" in report.by_id("latest-offset-monotonic").summary


def _checkpoint(root: Path, ends: list[int]) -> Path:
    ckpt = root / "ckpt"
    (ckpt / "offsets").mkdir(parents=True)
    (ckpt / "commits").mkdir()
    for n, end in enumerate(ends):
        (ckpt / "offsets" / str(n)).write_text(f'v1\n{META}\n{{"rows": {end}}}')
        (ckpt / "commits" / str(n)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    return ckpt


def test_a_batch_ending_behind_its_predecessor_is_named_with_both_offsets(tmp_path: Path) -> None:
    bad, n = offsets_behind(_checkpoint(tmp_path, [10, 20, 30, 40, 10, 20]))
    assert n == 6 and bad == ['batch 4 ends at {"rows": 10}, behind batch 3\'s end {"rows": 40} (rows: 40 -> 10)']
    result = behind_result(tmp_path / "ckpt")
    assert result.status == "fail" and result.id == BEHIND_ID and "fell behind the checkpoint" in result.summary


def test_forward_only_checkpoint_passes_and_a_single_batch_is_skipped(tmp_path: Path) -> None:
    assert behind_result(_checkpoint(tmp_path / "a", [10, 10, 25])).status == "pass"
    assert behind_result(_checkpoint(tmp_path / "b", [10])).status == "skip"


def test_a_note_says_what_the_end_to_end_measured_and_never_becomes_a_failure() -> None:
    note = CheckOutcome("latest-offset-stable", "note", "moved")
    first = CheckOutcome("initial-offset-stable", "note", "moved")
    ok = consequences([note, first, CheckOutcome(E2E_ID, "pass", "fine"), CheckOutcome(BEHIND_ID, "pass", "fine")])
    assert [c.status for c in ok[:2]] == ["note", "note"]
    measured = "(measured: no consequence, end-to-end was exactly-once under SIGKILLs)"
    assert all(c.summary.endswith(measured) for c in ok[:2])
    shown = consequences([note, CheckOutcome(E2E_ID, "fail", "lost"), CheckOutcome(BEHIND_ID, "fail", "behind")])
    assert shown[0].status == "note"
    assert shown[0].summary.endswith(f"end-to-end was not exactly-once; {E2E_ID}, {BEHIND_ID} failed and say(s) why)")
    assert consequences([note])[0].summary.endswith("(consequence not measured: the end-to-end check did not run)")
    passed = CheckOutcome("latest-offset-stable", "pass", "same")
    assert consequences([passed, CheckOutcome(E2E_ID, "pass", "fine")])[0] == passed


def test_oracle_ends_at_the_last_committed_batch_not_the_last_logged(tmp_path: Path) -> None:
    """A query stopped after its batches may have logged one more batch it never ran (measured in CI: 4 rows
    'lost' that were in offsets/N but not yet in the sink); the oracle must not expect them."""
    from harness.conformance.source.query import committed_end

    ckpt = tmp_path / "ckpt"
    (ckpt / "offsets").mkdir(parents=True)
    (ckpt / "commits").mkdir()
    assert committed_end(ckpt) is None
    meta = '{"batchWatermarkMs":0,"batchTimestampMs":0,"conf":{}}'
    for n in range(4):
        (ckpt / "offsets" / str(n)).write_text(f'v1\n{meta}\n{{"rows": {10 * (n + 1)}}}')
        if n < 3:
            (ckpt / "commits" / str(n)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    assert committed_end(ckpt) == {"rows": 30}


def test_oracle_ends_at_a_batch_the_file_sink_published_before_commits_was_written(tmp_path: Path) -> None:
    from harness.conformance.source.query import committed_end

    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    (ckpt / "offsets").mkdir(parents=True)
    (ckpt / "commits").mkdir()
    (out / "_spark_metadata").mkdir(parents=True)
    meta = '{"batchWatermarkMs":0,"batchTimestampMs":0,"conf":{}}'
    for n in range(3):
        (ckpt / "offsets" / str(n)).write_text(f'v1\n{meta}\n{{"rows": {10 * (n + 1)}}}')
        (out / "_spark_metadata" / str(n)).write_text('v1\n{"path":"f","size":1}')
        if n < 1:
            (ckpt / "commits" / str(n)).write_text('v1\n{"nextBatchWatermarkMs":0}')
    assert committed_end(ckpt) == {"rows": 10}  # what commits/ alone says
    assert committed_end(ckpt, out) == {"rows": 30}  # batch 2's rows are visible in the sink
