"""The source checks about offsets (no Spark): ``offsets-json``, ``offsets-canonical``,
``initial-offset-stable``, ``latest-offset-stable``, ``latest-offset-monotonic``, ``available-now-target``; each a
pure judgement of a
:class:`~harness.conformance.source.probe.SourceProbe` (registered in :mod:`.checks`)."""

from __future__ import annotations

import json

from harness.conformance.results import CheckFailed, CheckOutcome, CheckSkipped
from harness.conformance.source.offsets import dumps, json_problems, regressions, short
from harness.conformance.source.probe import ADVANCES, MAX_ADMISSION_STEPS, SourceProbe, StepFailed, _same


def offsets_json(p: SourceProbe) -> str:
    seen = list(p.offsets().seen)
    try:
        adm = p.admission()
        seen += [(f"latestOffset with {adm.chosen}", s) for s in adm.steps] if adm else []
    except StepFailed:
        pass  # admission-control reports it
    bad = [f"{where}: {short(off)} {prob}" for where, off in seen for prob in json_problems(off)]
    if bad:
        raise CheckFailed(
            f"{len(bad)} offset problem(s): Spark stores offsets as JSON and hands json.loads(text) back",
            bad,
            fix="return a dict of str keys and JSON values (str, int, float, bool, None, lists, dicts); no tuples, "
            "sets, int keys, datetimes or NaN",
        )
    return f"all {len(seen)} offsets are JSON objects that round-trip unchanged"


def offsets_canonical(p: SourceProbe) -> str:
    seen = p.offsets().seen
    bad = []
    for n, (w1, a) in enumerate(seen):
        for w2, b in seen[n + 1 :]:
            if a == b and dumps(a) != dumps(b):
                bad.append(f"{w1} = {dumps(a)} but {w2} = {dumps(b)}")
    note = ""
    try:
        o = p.offsets()
        for ans in p.elsewhere():
            pairs = ((ans["initial_json"], o.i, "initialOffset()"), (ans["latest_json"][0], o.c, "latestOffset"))
            for text, mine, what in pairs:
                if text is not None and json.loads(text) == mine and text != dumps(mine):
                    bad.append(f"{what} is {dumps(mine)} here but {text} with PYTHONHASHSEED={ans['hash_seed']}")
    except StepFailed:
        note = " (the cross-process comparison could not run; see read-cross-process)"
    if bad:
        raise CheckFailed(
            "equal offsets serialise differently: Spark compares offsets as JSON text, so it sees new data "
            "that is not there (endless empty batches) or a batch that never ends",
            bad,
            fix="build offset dicts in a fixed key order (e.g. from sorted partition ids), never from a set or dict "
            "whose order depends on hashing or arrival",
        )
    return "equal offsets always produce identical JSON text" + note


#: Ids of the two habit checks: a difference they find is a ``note``; :func:`.suite.check_source` adds
#: what the end-to-end run measured.
INITIAL_ID = "initial-offset-stable"
STABLE_ID = "latest-offset-stable"
NOTE_IDS = (INITIAL_ID, STABLE_ID)


def initial_offset_stable(p: SourceProbe) -> str | CheckOutcome:
    """``note`` when readers or processes answer ``initialOffset()`` differently (a clock-driven start, like
    Kafka's ``startingOffsets=latest``). Not a contract breach: Spark asks once to compute the first batch's
    end and once more to plan it, and again after a restart before the first commit, so only batch 0 can
    differ, and only if data arrives between the answers (measured: docs/conformance.md)."""
    o = p.offsets()
    bad = [] if o.i == o.i2 else [f"first reader: {short(o.i)}, second reader: {short(o.i2)}"]
    note = ""
    try:
        for ans in p.elsewhere():
            if ans["initial_json"] is None or json.loads(ans["initial_json"]) != o.i:
                bad.append(f"this process: {short(o.i)}, PYTHONHASHSEED={ans['hash_seed']}: {ans['initial_json']}")
    except StepFailed:
        note = " (the other processes could not read: see read-cross-process)"
    if bad:
        return CheckOutcome(
            INITIAL_ID,
            "note",
            "initialOffset() differs between reader instances (it follows the clock or a counter): Spark plans "
            "batch 0 from a second answer, and from a third after a restart before the first commit, so rows "
            "arriving between two answers may never be read; later batches are not affected",
            tuple(bad),
            fix="if the start must not move, derive it from the options or the external system (Spark's own Kafka "
            "source stores its initial offsets in the checkpoint for this reason)",
        )
    return f"initialOffset() is {short(o.i)} in every reader and process" + note


def latest_offset_stable(p: SourceProbe) -> str | CheckOutcome:
    """``note`` when, with no data added, a repeated call, a second reader or a reader restarted from a
    checkpointed offset reports another offset (forward or back). Spark asks each reader once per trigger with
    the previous batch's end as ``start``, so a per-call or per-instance answer is not a contract breach; what
    would be (an answer behind ``start``) is ``latest-offset-monotonic``'s, and what it does to a real query is
    ``end-to-end``'s and ``latest-offset-behind-checkpoint``'s."""
    o = p.offsets()
    moved = []
    for label, earlier, later in (
        ("same reader, called twice", o.b, o.b_again),
        ("second reader", o.b, o.b2),
        (f"reader restarted from {short(o.b)}", o.c, o.c_restart),
    ):
        if later == earlier:
            continue
        back = regressions(earlier, later)
        moved.append(f"{label}: {short(earlier)} then {short(later)}" + (f" ({'; '.join(back[:3])})" if back else ""))
    if moved:
        return CheckOutcome(
            STABLE_ID,
            "note",
            "latestOffset answers depend on the reader instance or on how often it was asked, not only on the data "
            "(like a counter that advances per call, or data arriving by itself); Spark asks once per trigger, "
            "so this is allowed as long as no answer is behind its `start`",
            tuple(moved),
            fix="nothing to fix if the data really arrives per call; a context that controls the data makes "
            "this check exact",
        )
    suffix = "" if p.feeds_data else " (no external context: the data never changed)"
    return "latestOffset is the same for every reader while no data arrives" + suffix


def latest_offset_monotonic(p: SourceProbe) -> str:
    o = p.offsets()
    bad = []
    for label, before, after in (
        ("initialOffset -> latestOffset", o.i, o.b),
        ("after adding data", o.b, o.c),
        ("after a restart from the checkpointed offset", o.b, o.c_restart),
        (f"after {ADVANCES} more advances", o.c, o.d),
        (f"after a restart from the offset reached {ADVANCES} advances later", o.d, o.d_restart),
    ):
        back = regressions(before, after)
        if back:
            bad.append(f"{label}: {short(before)} -> {short(after)} ({'; '.join(back[:3])})")
    if bad:
        raise CheckFailed(
            "latestOffset went backwards: Spark would plan a batch whose end is before its start and re-read "
            "or skip rows",
            bad,
            fix="latestOffset(start, limit) must return an offset >= start, computed from durable state of the "
            "external system; after a restart the reader only knows the checkpointed `start`",
        )
    return (
        "latestOffset never goes backwards, also after restarts from checkpointed offsets "
        f"(one step in and {ADVANCES + 2} steps in)"
    )


def available_now_target(p: SourceProbe) -> str:
    """Spark's ``SupportsTriggerAvailableNow``: ``prepareForTriggerAvailableNow`` records the latest offset "at the
    time (a.k.a the target offset for the query)", and the source then "will not return an offset higher than the
    target offset when latestOffset is called"."""
    job = p.available_now()
    if job is None:
        raise CheckSkipped(
            "the reader does not implement SupportsTriggerAvailableNow: Spark runs a Trigger.AvailableNow query over "
            "it as one Trigger.Once batch (its read limit ignored), so there is no target to check"
        )
    if len(job.steps) > MAX_ADMISSION_STEPS:
        raise CheckFailed(
            f"after prepareForTriggerAvailableNow latestOffset kept advancing for {MAX_ADMISSION_STEPS} "
            "calls: an availableNow job never ends",
            fix="stop at the target offset recorded in prepareForTriggerAvailableNow",
        )
    bad = []
    if not _same(job.after, job.target):
        bad.append(
            f"latestOffset({short(job.target)}) = {short(job.after)} once data arrived during the job: past the target"
        )
    if p.feeds_data and not _same(job.target, job.available):
        bad.append(f"the job stopped at {short(job.target)} but {short(job.available)} was available when it started")
    if bad:
        raise CheckFailed(
            "an availableNow job does not process exactly the data available when it started: it reads data that "
            "arrived later (and never ends while data keeps arriving), or ends before the data it had to process",
            bad,
            fix="in prepareForTriggerAvailableNow record the latest offset of all available data; in latestOffset "
            "return min(what the limit admits, that target), never more",
        )
    if not p.feeds_data and _same(job.newer, job.target):
        raise CheckSkipped(
            "no data arrived during the job (no context adds data and none came by itself), so the target's cap "
            "was not tested; give a context that adds data (--context)"
        )
    return (
        f"after prepareForTriggerAvailableNow the job stopped at its target {short(job.target)} "
        f"({len(job.steps) - 1} batch(es)) and stayed there when more data arrived"
    )
