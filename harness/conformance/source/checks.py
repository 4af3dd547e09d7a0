"""The source conformance checks that need no Spark, each a pure judgement of a
:class:`~harness.conformance.source.probe.SourceProbe`: those about reads here, those about offsets in
:mod:`.offset_checks`; ``end-to-end`` and ``latest-offset-behind-checkpoint`` (Spark) live in :mod:`.e2e`. Their
ids, order and documentation are the registry's (:mod:`harness.conformance.checkdocs`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from harness.conformance.checkdocs import SOURCE_CHECKS, judges, spark_free
from harness.conformance.raised import short_frame, subject_frame, subject_roots
from harness.conformance.results import CheckFailed, CheckOutcome, CheckSkipped, run_check
from harness.conformance.source.offset_checks import (
    NOTE_IDS,
)
from harness.conformance.source.offsets import short
from harness.conformance.source.probe import SourceProbe, StepFailed, total_rows
from harness.sources.reader import diff_rows
from scenarios.readlimits import ReadMaxRows

Check = Callable[[SourceProbe], "str | CheckOutcome"]


def _unwrap(fn: Check) -> Check:
    """Turn a probe step's stored exception into a ``fail`` naming the step, the exception and the source's frame;
    a habit check (:data:`NOTE_IDS`, never a failure) is skipped instead: the contract checks fail with the cause."""

    def run(p: SourceProbe) -> str | CheckOutcome:
        try:
            return fn(p)
        except StepFailed as exc:
            first = str(exc.cause).splitlines()[0] if str(exc.cause) else ""
            frame = subject_frame(exc.cause, subject_roots(p.source.source_cls.__module__))
            at = f" at {short_frame(frame)}" if frame else ""
            if fn.__name__.replace("_", "-") in NOTE_IDS:
                raise CheckSkipped(
                    f"not judged: {exc.step} raised {type(exc.cause).__name__}: {first}{at} (the failing checks "
                    "say what the contract asks)"
                ) from None
            raise CheckFailed(
                f"{exc.step} raised {type(exc.cause).__name__}: {first}{at}",
                fix="the source must not raise for a valid offset range; run that method yourself to see the traceback",
            ) from None

    run.__name__ = fn.__name__
    return run


def _nothing_read(what: str, p: SourceProbe) -> CheckSkipped:
    """The skip of a comparison that had no rows to compare (it would prove nothing)."""
    why = (
        "give a context that adds data (--context) so that there are rows to compare"
        if not p.feeds_data
        else "the context added data but the source planned none: see latest-offset-monotonic and end-to-end"
    )
    return CheckSkipped(f"{what} read 0 rows, so there was nothing to compare; {why}")


def read_repeatable(p: SourceProbe) -> str:
    rows = p.ranges()
    if not total_rows(rows["i_c"]) and not total_rows(rows["i_c_again"]):
        raise _nothing_read("[initial, latest)", p)
    if rows["i_c"] != rows["i_c_again"]:
        raise CheckFailed(
            "reading the same offset range twice gave different rows: a batch replayed after a crash is not the "
            "batch that was lost",
            diff_rows(rows["i_c"], rows["i_c_again"]),
            fix="make read() a pure function of the partition (seed random generators from the offsets, never "
            "use the clock or unseeded randomness)",
            observed=("replay-divergent",),
        )
    return f"[initial, latest) read twice: the same {total_rows(rows['i_c'])} rows"


def read_cross_process(p: SourceProbe) -> str:
    rows, answers = p.ranges()["i_c"], p.elsewhere()
    bad = []
    for ans in answers:
        seed = f"PYTHONHASHSEED={ans['hash_seed']}"
        if ans["rows"][0] != rows:
            bad.append(f"planned and read in another process ({seed}):")
            bad += diff_rows(rows, ans["rows"][0])
        if ans["parent_partition_rows"][0] is not None and ans["parent_partition_rows"][0] != rows:
            bad.append(f"this process's partitions, unpickled and read in another process ({seed}):")
            bad += diff_rows(rows, ans["parent_partition_rows"][0])
    if not bad and not total_rows(rows):
        raise _nothing_read("[initial, latest), in this and other processes,", p)
    if bad:
        raise CheckFailed(
            "another Python process reads different rows for the same range: Spark reads on executors and "
            "replays after restarts in new processes",
            bad,
            fix="do not depend on hash(), id(), set order, the process or global mutable state in partitions()/read()",
            observed=("replay-divergent",),
        )
    seeds = ", ".join(a["hash_seed"] for a in answers)
    return f"processes with PYTHONHASHSEED={seeds} read the same {total_rows(rows)} rows"


def ranges_contiguous(p: SourceProbe) -> str:
    o, rows = p.offsets(), p.ranges()
    bad, kinds = [], set()
    if total_rows(rows["b_b"]):
        bad.append(f"the empty range [b, b) with b={short(o.b)} returned {total_rows(rows['b_b'])} row(s):")
        bad += diff_rows(Counter(), rows["b_b"])
        kinds.add("duplicate")
    if o.c != o.i and not total_rows(rows["i_c"]):
        bad.append(f"latestOffset moved from {short(o.i)} to {short(o.c)} but reading that range gave no rows")
        kinds.add("lost")
    if o.b != o.c:
        union = rows["i_b"] + rows["b_c"]
        if union != rows["i_c"]:
            extra, missing = union - rows["i_c"], rows["i_c"] - union
            bad.append(
                f"[a,b) + [b,c) != [a,c) with a={short(o.i)}, b={short(o.b)}, c={short(o.c)}: "
                f"{total_rows(extra)} row(s) too many, {total_rows(missing)} missing:"
            )
            bad += diff_rows(rows["i_c"], union)
            kinds |= {k for k, d in (("duplicate", extra), ("lost", missing)) if d}
    if bad:
        raise CheckFailed(
            "consecutive offset ranges overlap or leave gaps: batches sharing a boundary duplicate or lose rows",
            bad,
            fix="each partition must cover [start, end) exactly: include start, exclude end, never shift the "
            "range, and return nothing when start == end",
            observed=tuple(sorted(kinds)),
        )
    if o.b == o.c:
        raise CheckSkipped("no data arrived between the two latestOffset calls, so there is no split point to test")
    if not total_rows(rows["i_c"]):
        raise _nothing_read("[a, c)", p)
    return f"[a,b) + [b,c) = [a,c) ({total_rows(rows['i_b'])} + {total_rows(rows['b_c'])} rows) and [b,b) is empty"


def read_between_offsets(p: SourceProbe) -> str:
    if p.kind != "simple":
        raise CheckSkipped("not a SimpleDataSourceStreamReader (replays re-plan partitions: see read-repeatable)")
    bad = []
    for start, end, read_rows, between in p.simple_reads():
        where = f"[{short(start)}, {short(end)})"
        if total_rows(read_rows) and not total_rows(between):
            bad.append(f"{where}: read() gave {total_rows(read_rows)} rows, readBetweenOffsets() gave none")
        elif read_rows != between:
            bad.append(f"{where}: readBetweenOffsets() differs from read():")
            bad += diff_rows(read_rows, between)
    if not bad and not any(total_rows(r) or total_rows(b) for _, _, r, b in p.simple_reads()):
        raise _nothing_read("read(start) and readBetweenOffsets", p)
    if bad:
        raise CheckFailed(
            "readBetweenOffsets(start, end) does not return the rows read(start) returned: Spark calls it to "
            "re-read a batch after a failure, so the replayed batch is lost or different",
            bad,
            fix="implement readBetweenOffsets to return exactly the rows between the two offsets, deterministically",
            observed=("lost",),
        )
    return "readBetweenOffsets returns the same rows as read() for every range"


def admission_control(p: SourceProbe) -> str:
    adm = p.admission()
    if adm is None:
        raise CheckSkipped(
            "getDefaultReadLimit() is ReadAllAvailable, so Spark never passes this source a limit (set the option "
            "that makes it return one, e.g. a max rows per batch, to test admission control)"
            if p.kind == "stream"
            else "simple readers have no read limits"
        )
    o, full = p.offsets(), p.ranges()["i_d"]
    if not adm.reached:
        raise CheckFailed(
            f"under {adm.chosen} latestOffset stopped at {short(adm.steps[-1])} and never reached {short(o.d)}",
            fix="with a limit, latestOffset must keep advancing by up to the limit until it reaches all data",
        )
    parts = p.admission_rows(adm)
    bad = []
    if isinstance(adm.limit, ReadMaxRows):
        bad += [
            f"batch {n}: {total_rows(r)} rows > {adm.limit.max_rows}"
            for n, r in enumerate(parts)
            if total_rows(r) > adm.limit.max_rows
        ]
    union = sum(parts, Counter())
    if not total_rows(full) and not total_rows(union):
        raise _nothing_read("[initial, d) with and without the limit", p)
    if union != full:
        bad.append("rows of the limited batches differ from one unlimited read:")
        bad += diff_rows(full, union)
    if bad:
        raise CheckFailed(
            f"under {adm.chosen} the batches do not cover the same data as without a limit",
            bad,
            fix="respect the limit Spark passes, and make limited offsets real split points of the data",
            observed=("lost",) if (full - union) else ("duplicate",),
        )
    return f"{len(parts)} batch(es) under {adm.chosen} cover the same {total_rows(full)} rows"


#: The Spark-free source checks' ids, in the registry's order (:mod:`harness.conformance.checkdocs`).
PURE_CHECKS: tuple[str, ...] = spark_free(SOURCE_CHECKS)


def run_pure_checks(probe: SourceProbe, skip: frozenset[str] = frozenset()) -> list[CheckOutcome]:
    """Every Spark-free check, in catalogue order (``skip``: ids reported as skipped on request)."""
    out: list[CheckOutcome] = []
    for cid, fn in judges(SOURCE_CHECKS).items():
        if cid in skip:
            out.append(CheckOutcome(cid, "skip", "skipped on request"))
            continue
        out.append(run_check(cid, lambda fn=fn: _unwrap(fn)(probe)))  # type: ignore[misc]
    return out
