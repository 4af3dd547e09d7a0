"""Running every sink check on one sink: the library entry point behind
``python -m harness check-sink`` and the pytest base class.

:func:`check_sink` runs the protocol checks (:mod:`.checks`), the
``crash-points`` campaign (:mod:`.campaign`), then ``declared-guarantee``:
the ``crash-anywhere`` campaign (:mod:`.steps`: a fault after each step
of the sink's own code), then ``declared-guarantee``:
the guarantee the sink actually showed (from the anomaly kinds every check
observed: :func:`~harness.conformance.guarantees.from_kinds`) must satisfy the
declared one. The report's ``guarantee`` says both.
"""

from __future__ import annotations

import functools
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource

from harness.conformance.checkdocs import SINK_CHECKS, judges
from harness.conformance.guarantees import check_declared, from_kinds, satisfies
from harness.conformance.results import CheckOutcome, ConformanceReport, run_check
from harness.conformance.sink.campaign import CHECK_ID as CRASH_ID
from harness.conformance.sink.campaign import MODES, run_crash_points
from harness.conformance.sink.checks import ReadBack, SinkProbe, SinkUnderTest
from harness.conformance.sink.scenario import SINK_POINTS, sink_config
from harness.conformance.sink.steps import CHECK_ID as ANYWHERE_ID
from harness.conformance.sink.steps import DEFAULT_STEPS, run_crash_anywhere
from harness.engine.pool import DriverPool
from harness.sources.loading import Ref, add_import_root, ref_of
from harness.spark.session import DEFAULT_MASTER

GUARANTEE_ID = "declared-guarantee"
#: Every sink check's id, in the registry's order: the Spark-free protocol checks, then the suite's own.
SINK_CHECK_IDS: tuple[str, ...] = tuple(c.id for c in SINK_CHECKS)


class _Spark:
    """The SparkSession foreachBatch checks need: the active one, else one built (and stopped) here."""

    def __init__(self) -> None:
        self.session: Any = None
        self.owned = False

    def __call__(self) -> Any:
        if self.session is None:
            from pyspark.sql import SparkSession

            self.session = SparkSession.getActiveSession()
            if self.session is None:
                from harness.spark.session import build_session

                self.session, self.owned = build_session("harness-check-sink"), True
        return self.session

    def close(self) -> None:
        if self.owned and self.session is not None:
            self.session.stop()
        self.session, self.owned = None, False


def declared_result(declared: str, checks: Sequence[CheckOutcome]) -> tuple[CheckOutcome, dict[str, Any]]:
    kinds = sorted({k for c in checks for k in c.observed if k != "leftover"})
    measured = from_kinds(kinds)
    ran = [c.id for c in checks if c.status in ("pass", "fail", "warn")]
    basis = f"from {len(ran)} check(s) that ran" + ("" if CRASH_ID in ran else "; crash-points did not run")
    evidence = ", ".join(f"{c.id}: {'/'.join(c.observed)}" for c in checks if c.observed) or "no anomaly observed"
    info = {"declared": declared, "measured": measured, "evidence": evidence, "basis": basis}
    if satisfies(measured, declared):
        return CheckOutcome(GUARANTEE_ID, "pass", f"declared {declared}; measured {measured} ({basis})"), info
    return (
        CheckOutcome(
            GUARANTEE_ID,
            "fail",
            f"declared {declared} but the sink showed {measured} ({basis})",
            (f"anomalies seen: {', '.join(kinds)}", evidence),
            fix=f"fix the failing checks, or declare the guarantee the sink gives ({measured})",
            observed=tuple(kinds),
        ),
        info,
    )


def check_sink(
    target: Any,
    read_back: ReadBack,
    options: Mapping[str, str] | None = None,
    *,
    guarantee: str = "exactly-once",
    faults: str = "mixed",
    points: Sequence[str] = SINK_POINTS,
    target_ref: Ref | None = None,
    read_back_ref: Ref | None = None,
    workdir: Path | None = None,
    skip: Iterable[str] = (),
    crash_points: bool = True,
    seed: int = 5,
    steps: int | None = DEFAULT_STEPS,
    wrappers: Sequence[str] = (),
    echo: Callable[[str], None] | None = None,
    every_step: bool = False,
    batch_rows: int | None = None,
) -> ConformanceReport:
    """All sink checks of ``target`` (a ``DataSource`` subclass with a stream
    writer, or a foreachBatch factory ``factory(path, **options)``), read back
    through ``read_back(path)``. ``crash_points=False`` (or skipping the id)
    leaves out the Spark campaigns; ``steps`` caps the kills of ``crash-anywhere``
    (every effect boundary of a census batch when they fit, else a seeded sample; ``None``: no cap),
    ``every_step`` aims them at every step instead of the boundaries, ``batch_rows`` sets the rows of
    its batches, and ``wrappers`` names the wrapped functions it aims at (default all). The work directory is
    a temp dir removed at the end unless ``workdir`` is given (or a check failed: its run is kept)."""
    echo = echo or (lambda m: print(m, file=sys.stderr, flush=True))
    declared = check_declared(guarantee)
    unknown = sorted(set(skip) - set(SINK_CHECK_IDS))
    if unknown:
        raise ValueError(f"unknown check id(s) {unknown}; known: {', '.join(SINK_CHECK_IDS)}")
    bad_points = sorted(set(points) - set(SINK_POINTS))
    if bad_points or not points:
        raise ValueError(f"--points {bad_points}: not crash points a sink reaches; known: {', '.join(SINK_POINTS)}")
    if faults not in MODES:
        raise ValueError(f"--faults {faults!r}: choose one of {', '.join(MODES)}")
    t_ref, r_ref = target_ref or ref_of(target), read_back_ref or ref_of(read_back)
    for r in (t_ref, r_ref):
        add_import_root(r.root)
    sink = SinkUnderTest(target, read_back, dict(options or {}), t_ref, r_ref)
    if sink.kind == "datasource" and target.streamWriter is DataSource.streamWriter:
        raise ValueError(
            f"sink {target.__name__} has no streamWriter(schema, overwrite): implement it, or pass a foreachBatch "
            "factory instead"
        )
    own = workdir is None
    root = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="harness-check-sink-"))
    t0 = time.monotonic()
    report = ConformanceReport(t_ref.spec, "sink")
    spark = _Spark()
    pool: DriverPool | None = None
    probe = SinkProbe(sink, root / "protocol", declared, spark)
    config = sink_config(target, t_ref, r_ref, sink.options, declared)
    # One pool for the Spark phases (crash points, census, steps): a cold start only for the first driver.
    # A foreachBatch function's kills take its Python alone under mixed faults, the JVM hosted apart; other
    # kills meet a ready standby (its SparkSession up): --faults hard on 7 boundaries took 59 s, not 84 s.
    hosted = sink.kind == "foreach_batch" and faults == "mixed"
    try:
        echo(f"check-sink {report.subject} ({sink.kind}, declared {declared}): protocol checks")
        for cid, fn in judges(SINK_CHECKS).items():
            skipped = cid in skip
            report.checks.append(
                CheckOutcome(cid, "skip", "skipped on request")
                if skipped
                else run_check(cid, functools.partial(fn, probe))
            )
        spark.close()
        if pool is None:
            pool = DriverPool(root / "drivers", DEFAULT_MASTER, {}, host_jvm=hosted, standby="ready")
        if CRASH_ID in skip or not crash_points:
            report.checks.append(CheckOutcome(CRASH_ID, "skip", "skipped on request (Spark campaign disabled)"))
        else:
            echo(f"check-sink {report.subject}: one {faults} fault per crash point ({len(points)} points)")
            result, _summary = run_crash_points(
                probe, config, root, points=points, mode=faults, seed=seed, echo=echo, pool=pool
            )
            report.checks.append(result)
        pool.retire()  # crash-anywhere's census starts on a driver process with nothing of crash-points in it
        if ANYWHERE_ID in skip or not crash_points:
            report.checks.append(CheckOutcome(ANYWHERE_ID, "skip", "skipped on request (Spark campaign disabled)"))
        else:
            result, report.steps = run_crash_anywhere(
                probe,
                config,
                root,
                steps=steps,
                wrappers=wrappers,
                mode=faults,
                seed=seed,
                echo=echo,
                every_step=every_step,
                batch_rows=batch_rows,
                pool=pool,
            )
            report.checks.append(result)
        g_result, report.guarantee = declared_result(declared, report.checks)
        report.checks.append(g_result if GUARANTEE_ID not in skip else CheckOutcome(GUARANTEE_ID, "skip", "on request"))
    finally:
        spark.close()
        if pool is not None:
            pool.close()
        report.duration_s = time.monotonic() - t0
        if own and report.exit_code == 0:
            shutil.rmtree(root, ignore_errors=True)
    return report
