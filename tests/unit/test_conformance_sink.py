"""Sink protocol checks without Spark (simulated tasks, pickled writers, a real
TaskContext): the reference sink passes; each broken example sink fails the
check meant for it; a sink declared at-least-once gets warnings, not failures,
for duplicates; the guarantee lattice and the declared-guarantee verdict."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from examples.connectors import attempt_keyed_sink, publish_in_write_sink
from harness.conformance import check_sink
from harness.conformance.guarantees import from_kinds, meet, satisfies
from harness.conformance.results import ConformanceReport
from harness.conformance.sink.task_sim import WriterSim, batch_rows, expected_rows
from scenarios.sinks.publish_in_write import PublishInWriteSink, read_published
from scenarios.sinks.transactional import TransactionalFileSink, read_visible


def run(target: Any, read_back: Any, tmp_path: Path, guarantee: str = "exactly-once") -> ConformanceReport:
    return check_sink(target, read_back, guarantee=guarantee, workdir=tmp_path, crash_points=False, echo=lambda m: None)


def statuses(report: ConformanceReport) -> dict[str, str]:
    return {c.id: c.status for c in report.checks}


def test_reference_transactional_sink_passes(tmp_path: Path) -> None:
    report = run(TransactionalFileSink, read_visible, tmp_path)
    st = statuses(report)
    assert st == {
        "write-invisible-until-commit": "pass",
        "idempotent-commit": "pass",
        "keys-on-batch-id": "pass",
        "abort-cleans-up": "pass",
        "task-retry": "pass",
        "crash-points": "skip",
        "crash-anywhere": "skip",
        "declared-guarantee": "pass",
    }, report.render_text()
    assert report.guarantee is not None and report.guarantee["measured"] == "exactly-once"
    assert report.exit_code == 0


BROKEN = [
    (
        publish_in_write_sink.PublishInWriteSink,
        publish_in_write_sink.read_back,
        "write-invisible-until-commit",
        "uncommitted-visible",
    ),
    (PublishInWriteSink, read_published, "write-invisible-until-commit", "uncommitted-visible"),
    (attempt_keyed_sink.AttemptKeyedSink, attempt_keyed_sink.read_back, "keys-on-batch-id", "lost"),
]


@pytest.mark.parametrize(
    ("target", "read_back", "check", "kind"), BROKEN, ids=["example-publish", "ref-publish", "attempt"]
)
def test_broken_sink_fails_its_check(target: Any, read_back: Any, check: str, kind: str, tmp_path: Path) -> None:
    report = run(target, read_back, tmp_path)
    result = report.by_id(check)
    assert result.status == "fail", report.render_text()
    assert kind in result.observed and result.fix
    assert report.by_id("declared-guarantee").status == "fail"
    assert report.exit_code == 1
    if target.__module__.startswith("examples."):
        assert check in (sys.modules[target.__module__].__doc__ or "")


def test_attempt_keyed_sink_passes_everything_else(tmp_path: Path) -> None:
    st = statuses(run(attempt_keyed_sink.AttemptKeyedSink, attempt_keyed_sink.read_back, tmp_path))
    assert [c for c, s in st.items() if s == "fail"] == ["keys-on-batch-id", "declared-guarantee"]


def test_publish_in_write_declared_at_least_once_only_warns(tmp_path: Path) -> None:
    report = run(publish_in_write_sink.PublishInWriteSink, publish_in_write_sink.read_back, tmp_path, "at-least-once")
    st = statuses(report)
    assert st["write-invisible-until-commit"] == st["idempotent-commit"] == st["abort-cleans-up"] == "warn"
    assert st["declared-guarantee"] == "pass"
    assert report.guarantee is not None and report.guarantee["measured"] == "at-least-once"
    assert report.exit_code == 0


def test_unknown_guarantee_and_skip_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="declare one of"):
        run(TransactionalFileSink, read_visible, tmp_path, "at-most-twice")
    with pytest.raises(ValueError, match="unknown check id"):
        check_sink(TransactionalFileSink, read_visible, skip=("nope",), workdir=tmp_path, echo=lambda m: None)


def test_writer_simulation_sets_the_task_context(tmp_path: Path) -> None:
    sim = WriterSim(TransactionalFileSink, {"path": str(tmp_path / "s")})
    msg = sim.task(3, 1, attempt=2, task_attempt_id=41)
    assert (msg.batch_id, msg.partition, msg.attempt, msg.rows) == (3, 1, 2, len(batch_rows(3, 1)))
    sim.commit([msg], 3)
    assert sorted(r["offset"] for r in read_visible(tmp_path / "s")) == sorted(r["offset"] for r in batch_rows(3, 1))
    assert len(expected_rows(0, 1)) == 40


def test_guarantee_lattice() -> None:
    assert from_kinds([]) == "exactly-once"
    assert from_kinds(["duplicate"]) == from_kinds(["uncommitted-visible"]) == "at-least-once"
    assert from_kinds(["lost"]) == "at-most-once"
    assert from_kinds(["lost", "duplicate"]) == "none"
    assert satisfies("exactly-once", "at-least-once") and not satisfies("at-least-once", "exactly-once")
    assert not satisfies("at-most-once", "at-least-once") and satisfies("at-least-once", "none")
    assert meet("at-least-once", "at-most-once") == "none"
