"""Running every source check on one source: the library entry point behind
``python -m harness check-source`` and the pytest base class.

:func:`check_source` builds the external context in a fresh work directory,
runs the Spark-free checks on a :class:`~harness.conformance.source.probe.SourceProbe`,
then (unless disabled) the Spark-backed ``end-to-end`` check with a second,
fresh context, and returns a :class:`~harness.conformance.results.ConformanceReport`.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.conformance.checkdocs import SOURCE_CHECKS
from harness.conformance.results import CheckOutcome, ConformanceReport
from harness.conformance.source.checks import run_pure_checks
from harness.conformance.source.offset_checks import NOTE_IDS
from harness.conformance.source.probe import SourceProbe
from harness.sources.contexts import ContextFactory, make_context
from harness.sources.loading import Ref, ref_of
from harness.sources.reader import SourceUnderTest

E2E_ID = "end-to-end"
BEHIND_ID = "latest-offset-behind-checkpoint"
#: Every source check's id, in the registry's order: the Spark-free checks, then the suite's two with Spark.
SOURCE_CHECK_IDS: tuple[str, ...] = tuple(c.id for c in SOURCE_CHECKS)


def _echo_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def check_source(
    source_cls: type[Any],
    options: Mapping[str, str] | None = None,
    context: ContextFactory | None = None,
    *,
    ref: Ref | None = None,
    workdir: Path | None = None,
    skip: Iterable[str] = (),
    end_to_end: bool = True,
    kills: int = 2,
    batch_rows: int = 30,
    echo: Callable[[str], None] | None = None,
) -> ConformanceReport:
    """All source checks of ``source_cls`` (a ``DataSource`` subclass) with
    ``options``, fed by ``context`` (a context factory; ``None``: no external
    system). ``skip`` names check ids to leave out; ``end_to_end=False`` skips
    the Spark-backed check. The work directory is a temp dir, removed at the end
    unless ``workdir`` is given or a check did not pass (its evidence names the run directory)."""
    echo = echo or _echo_stderr
    unknown = sorted(set(skip) - set(SOURCE_CHECK_IDS))
    if unknown:
        raise ValueError(f"unknown check id(s) {unknown}; known: {', '.join(SOURCE_CHECK_IDS)}")
    from pyspark.sql.datasource import DataSource

    if not (isinstance(source_cls, type) and issubclass(source_cls, DataSource)):
        raise TypeError(f"source {source_cls!r} is not a pyspark.sql.datasource.DataSource subclass")
    if (
        source_cls.streamReader is DataSource.streamReader
        and source_cls.simpleStreamReader is DataSource.simpleStreamReader
    ):
        raise ValueError(f"source {source_cls.__name__} implements neither streamReader() nor simpleStreamReader()")
    ref = ref or ref_of(source_cls)
    source = SourceUnderTest(source_cls, options or {})
    own_dir = workdir is None
    root = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="harness-check-source-"))
    t0 = time.monotonic()
    report = ConformanceReport(f"{ref.module}:{ref.attr}", "source")
    try:
        probe = SourceProbe(source, ref, make_context(context, root / "probe"), batch_rows)
        try:
            echo(f"check-source {report.subject}: Spark-free checks")
            report.checks += run_pure_checks(probe, frozenset(skip))
        finally:
            probe.close()
        if E2E_ID in skip or not end_to_end:
            reason = "skipped on request" if E2E_ID in skip else "Spark-backed check disabled (end_to_end=False)"
            report.checks += [CheckOutcome(E2E_ID, "skip", reason), CheckOutcome(BEHIND_ID, "skip", reason)]
        else:
            from harness.conformance.source.e2e import run_end_to_end

            echo(f"check-source {report.subject}: end-to-end under SIGKILL(s) into the parquet file sink")
            e2e, behind = run_end_to_end(
                source, ref, context, root / "e2e", kills=kills, batch_rows=batch_rows, echo=echo
            )
            if BEHIND_ID in skip:
                behind = CheckOutcome(BEHIND_ID, "skip", "skipped on request")
            report.checks += [e2e, behind]
        report.checks = consequences(report.checks)
    finally:
        report.duration_s = time.monotonic() - t0
        if own_dir and report.exit_code == 0:
            shutil.rmtree(root, ignore_errors=True)
    return report


def consequences(checks: list[CheckOutcome]) -> list[CheckOutcome]:
    """Each ``note`` of a habit check (:data:`~.offset_checks.NOTE_IDS`) says what the end-to-end run measured:
    no consequence when it was exactly-once, a possible cause when it failed. A note never becomes a failure:
    the failing contract check says what is wrong."""
    e2e = next((c for c in checks if c.id == E2E_ID), None)
    if e2e is None or e2e.status in ("skip", "error"):
        measured = "consequence not measured: the end-to-end check did not run"
    elif e2e.status == "pass":
        measured = "measured: no consequence, end-to-end was exactly-once under SIGKILLs"
    else:
        failed = ", ".join(c.id for c in checks if c.status == "fail")
        measured = f"measured: end-to-end was not exactly-once; {failed} failed and say(s) why"
    return [
        replace(c, summary=f"{c.summary} ({measured})") if c.id in NOTE_IDS and c.status == "note" else c
        for c in checks
    ]
