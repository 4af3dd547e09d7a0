"""One example of a source chaos campaign: the source under test (:class:`SourceSubject`), what the
campaign draws (:class:`SourceSchedule`) and how one schedule is played end to end under real SIGKILLs
on the harness's one engine (:func:`play`, :func:`.run.run_source`).

A subject with a context (``--context``) is fed by it: each round adds rows and may kill the batch it plans.
A subject without one is *context-less*: its data arrives by itself (a poller, a live feed, a counter, the
clock), so nothing is added; each round runs one query that lets the source plan ``batches`` batches (the
same number every round of an example, as ``batches_per_run`` in the run's spec) and may kill one of them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, overload

from hypothesis import strategies as st

from harness.conformance.source.e2e import KILL_POINTS
from harness.conformance.source.run import SourceOutcome, python_source_spec, run_source

#: The anomaly kind of an example whose query failed by an exception of the source's own code.
RAISED = "source-raised"
#: Rows the context adds while a killed driver is down (data keeps arriving).
DOWN_ROWS = 5
MAX_ROWS = 40
#: Context-less: most batches a round lets the source plan.
MAX_BATCHES = 4


@dataclass(frozen=True)
class SourceSubject:
    """The source under test: ``source`` (``path.py:Class``), ``context`` (``path.py:function`` or ``None``)
    and the source's options."""

    source: str
    context: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    @property
    def contextless(self) -> bool:
        """No context: the source's data arrives by itself and a campaign draws batches per round, not rows."""
        return not self.context

    def load(self) -> tuple[Any, Any, Any]:
        """(the DataSource class, its :class:`Ref`, the context factory or ``None`` when context-less);
        ``LoadError`` names a bad reference."""
        from harness.sources.loading import load

        cls, ref = load(self.source, "source")
        return cls, ref, (load(self.context, "--context")[0] if self.context else None)

    def argv(self) -> list[str]:
        """The ``chaos`` arguments that name this subject: ``--source S [--context C] [--option K=V ...]``."""
        parts = ["--source", self.source, *(["--context", self.context] if self.context else [])]
        for k, v in sorted(self.options.items()):
            parts += ["--option", f"{k}={v}"]
        return parts

    def command(self) -> str:
        """:meth:`argv`, shell-quoted."""
        from harness.engine.commandline import shell_line

        return shell_line(self.argv())


@dataclass(frozen=True)
class SourceSchedule:
    """What one example plays, round by round: ``rounds`` of ``(amount, point)``, ``point`` the crash point
    where the driver is SIGKILLed (``None``: no kill).

    With a context (``batches is None``) ``amount`` is the rows the context adds and the kill is in the batch
    the round plans. Context-less (``batches`` = the batches every round lets the source plan, 1 to
    :data:`MAX_BATCHES`) ``amount`` is which of the round's batches the kill is in (1 = the first the round
    commits; 0 without a kill)."""

    rounds: tuple[tuple[int, str | None], ...]
    batches: int | None = None

    def describe(self) -> str:
        if self.batches is None:
            parts = [f"{rows} rows" + (f" + kill at {point}" if point else "") for rows, point in self.rounds]
            return f"{len(self.rounds)} round(s): " + "; ".join(parts)
        kills = [f"kill at {point} of its batch {nth}" if point else "no kill" for nth, point in self.rounds]
        return f"{len(self.rounds)} round(s) of {self.batches} batch(es): " + "; ".join(kills)

    @property
    def kills(self) -> int:
        return sum(1 for _, point in self.rounds if point)

    def to_doc(self) -> dict[str, Any]:
        """The JSON form a bundle keeps (:meth:`from_doc` gives the schedule back)."""
        return {"schedule": [list(r) for r in self.rounds], "batches_per_round": self.batches}

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> SourceSchedule:
        """The schedule of a :meth:`to_doc` document (a bundle written before context-less schedules has no
        ``batches_per_round``: it had a context). ``KeyError`` / ``TypeError`` / ``ValueError`` for another."""
        batches = doc.get("batches_per_round")
        rounds = tuple((int(n), None if point is None else str(point)) for n, point in doc["schedule"])
        return cls(rounds, None if batches is None else int(batches))


def source_schedules(max_rounds: int, max_faults: int) -> st.SearchStrategy[SourceSchedule]:
    """Schedules with a context: they shrink towards one round, one row and no kill."""
    round_ = st.tuples(st.integers(1, MAX_ROWS), st.none() | st.sampled_from(KILL_POINTS))
    lists = st.lists(round_, min_size=1, max_size=max(1, max_rounds + 1))
    return lists.filter(lambda rs: sum(1 for _, p in rs if p) <= max_faults).map(lambda rs: SourceSchedule(tuple(rs)))


def contextless_schedules(max_rounds: int, max_faults: int) -> st.SearchStrategy[SourceSchedule]:
    """Context-less schedules: 1 to ``max_rounds + 1`` rounds of 1 to :data:`MAX_BATCHES` batches, at most
    ``max_faults`` kills, each in one of its round's batches. They shrink towards one round of one batch
    without a kill, then fewer kills, in earlier batches, at earlier crash points."""
    round_ = st.tuples(st.integers(1, MAX_BATCHES), st.none() | st.sampled_from(KILL_POINTS))
    lists = st.lists(round_, min_size=1, max_size=max(1, max_rounds + 1))
    lists = lists.filter(lambda rs: sum(1 for _, p in rs if p) <= max_faults)

    def build(batches: int, rounds: list[tuple[int, str | None]]) -> SourceSchedule:
        return SourceSchedule(tuple((min(n, batches), p) if p else (0, None) for n, p in rounds), batches)

    return st.tuples(st.integers(1, MAX_BATCHES), lists).map(lambda t: build(*t))


def schedules_for(subject: SourceSubject, max_rounds: int, max_faults: int) -> st.SearchStrategy[SourceSchedule]:
    """The strategy a campaign over ``subject`` draws from (context-less or not)."""
    draw = contextless_schedules if subject.contextless else source_schedules
    return draw(max_rounds, max_faults)


def play(subject: SourceSubject, schedule: SourceSchedule, run_dir: Path, pool: Any) -> SourceOutcome:
    """One end-to-end run of ``schedule`` in ``run_dir`` on ``pool`` (a context lives beside it). A
    context-less run adds nothing, before a round or while a killed driver is down: each round's query runs
    until the source has planned ``schedule.batches`` more batches. Kills are optional (one that never fired
    is listed in ``outcome.unfired``; the campaign discards such an example and reports it)."""
    from harness.sources.contexts import make_context
    from harness.sources.loading import add_import_root
    from harness.sources.reader import SourceUnderTest

    cls, ref, factory = subject.load()
    add_import_root(ref.root)
    source = SourceUnderTest(cls, subject.options)
    points = [point for _, point in schedule.rounds]
    if subject.contextless or schedule.batches is not None:
        if not subject.contextless or schedule.batches is None:
            raise ValueError(f"a schedule of {schedule.describe()} does not fit the source {subject.command()}")
        spec = {**python_source_spec(source, ref, {}), "batches_per_run": schedule.batches}
        nth = [n for n, _ in schedule.rounds]
        return run_source(
            run_dir, spec, lambda r: {"rows": 0}, len(points), points, lambda m: None, kills_optional=True,
            kill_nth=nth, pool=pool,
        )  # fmt: skip
    ctx = make_context(factory, run_dir.parent / f"{run_dir.name}-context")
    try:
        spec = python_source_spec(source, ref, ctx.options())

        def feed(r: int) -> dict[str, int]:
            rows = schedule.rounds[r][0] if r < len(schedule.rounds) else DOWN_ROWS
            ctx.add_data(rows)
            return {"rows": rows}

        return run_source(run_dir, spec, feed, len(points), points, lambda m: None, kills_optional=True, pool=pool)
    finally:
        ctx.close()


def anomaly_keys(anomalies: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What a replay must reproduce: each anomaly's kind, row and counts (a source's rows carry no harness
    provenance, so the row itself is the identity)."""
    return sorted(
        (a["kind"], json.dumps(a["row"], sort_keys=True, default=str), a["observed_count"], a["expected_count"])
        for a in anomalies
    )


def anomalies_of(outcome: SourceOutcome) -> list[dict[str, Any]]:
    return [asdict(a) for a in outcome.result.anomalies] if outcome.result else []


def counts_text(counts: dict[str, int]) -> str:
    """``2 duplicate, 1 lost`` (or ``no anomaly``)."""
    return ", ".join(f"{n} {k}" for k, n in counts.items()) or "no anomaly"


def verdict_of(outcome: SourceOutcome) -> tuple[str, dict[str, int]]:
    """An example's verdict and anomaly counts. A run whose rows match but in which a round added data and no
    new batch was planned (the source stopped reporting data: its rows never reach any sink) is a violation,
    counted as ``stalled`` rounds, as the kit's end-to-end check judges it; a query failed by an exception of the
    source's own code is a violation counted as :data:`RAISED` (``outcome.error`` names the exception and frame)."""
    counts = outcome.result.counts() if outcome.result else {}
    if outcome.verdict == "unknown":
        from harness.conformance.raised import log_texts, source_raised

        ref = _python_ref(outcome.run_dir)
        raised = source_raised([outcome.error or "", *log_texts(outcome.run_dir)], ref)
        if raised is not None:  # the source's own code failed the query: a finding, shrunk like any other
            where = "returned a value PySpark refused" if raised.returned else "raised inside Spark"
            outcome.error = f"the source {where}: {raised.describe()}"
            return "violated", {RAISED: 1}
    if outcome.verdict == "exactly-once" and outcome.stalls:
        return "violated", {**counts, "stalled": len(outcome.stalls)}
    return outcome.verdict, counts


def _python_ref(run_dir: Path) -> str:
    """The module of the Python source a run directory's ``source_run.json`` names (``""`` if none)."""
    try:
        ref = json.loads((run_dir / "source_run.json").read_text()).get("python_ref") or ["", ""]
    except (OSError, ValueError):
        return ""
    return str(ref[0])


@overload
def as_ref(obj: None) -> None: ...
@overload
def as_ref(obj: object) -> str: ...
def as_ref(obj: Any) -> str | None:
    """``obj`` as a ``path/to/module.py:Attr`` reference that child processes can load (a string is returned
    unchanged): what the pytest forms store when they are given the class or the function itself."""
    import inspect
    import sys

    if obj is None or isinstance(obj, str):
        return obj
    from harness.sources.loading import ref_of

    ref = ref_of(obj)  # LoadError for an object of __main__
    return f"{inspect.getfile(sys.modules[ref.module])}:{ref.attr}"
