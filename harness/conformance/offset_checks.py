"""The source checks about offsets (no Spark): ``offsets-json``, ``offsets-canonical``,
``initial-offset-stable``, ``latest-offset-stable``, ``latest-offset-monotonic``; each a pure judgement of a
:class:`~harness.conformance.source_probe.SourceProbe` (registered in :mod:`.source_checks`)."""

from __future__ import annotations

import json

from harness.conformance.offsets import dumps, json_problems, regressions, short
from harness.conformance.results import CheckFailed, CheckResult
from harness.conformance.source_probe import ADVANCES, SourceProbe, StepFailed


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


def initial_offset_stable(p: SourceProbe) -> str:
    o = p.offsets()
    bad = [] if o.i == o.i2 else [f"first reader: {short(o.i)}, second reader: {short(o.i2)}"]
    for ans in p.elsewhere():
        if ans["initial_json"] is None or json.loads(ans["initial_json"]) != o.i:
            bad.append(f"this process: {short(o.i)}, PYTHONHASHSEED={ans['hash_seed']}: {ans['initial_json']}")
    if bad:
        raise CheckFailed(
            "initialOffset() differs between reader instances: a query restarted before its first commit "
            "would start somewhere else",
            bad,
            fix="derive the initial offset from the external system or the options, not from the clock or a counter",
        )
    return f"initialOffset() is {short(o.i)} in every reader and process"


#: The id of ``latest-offset-stable``; :func:`.source_suite.check_source` turns its ``warn`` into ``fail`` when the
#: end-to-end shows a consequence.
STABLE_ID = "latest-offset-stable"


def latest_offset_stable(p: SourceProbe) -> str | CheckResult:
    """``fail`` when a later call, from any reader, is *behind* an earlier one while no data arrived; ``warn``
    when the offsets only moved forward (data that arrives by itself, like Spark's ``rate`` source)."""
    o = p.offsets()
    backward, forward = [], []
    for label, earlier, later in (
        ("same reader, called twice", o.b, o.b_again),
        ("second reader", o.b, o.b2),
        (f"reader restarted from {short(o.b)}", o.c, o.c_restart),
    ):
        if later == earlier:
            continue
        back = regressions(earlier, later)
        line = f"{label}: {short(earlier)} then {short(later)}"
        (backward if back else forward).append(line + (f" ({'; '.join(back[:3])})" if back else ""))
    if backward:
        raise CheckFailed(
            "latestOffset went back although no new data arrived: a later call, or a new reader, reports less "
            "data than an earlier one",
            backward + forward,
            fix="compute latestOffset from what the external system holds (and the read limit), not from a "
            "per-instance counter, the reader's own start time or random state",
        )
    if forward:
        return CheckResult(
            STABLE_ID,
            "warn",
            "latestOffset moved forward although the context added no data: the data seems to arrive by itself "
            "(like Spark's rate source). That is fine if it does; the end-to-end check shows whether it has a "
            "consequence (this becomes a failure if it does)",
            tuple(forward),
            fix="if data should not arrive by itself, compute latestOffset from the external system, not the "
            "clock or a counter; if it does, a context that controls it makes this check exact",
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
