"""One example of a source chaos campaign: the source under test (:class:`SourceSubject`), what the
campaign draws (:class:`SourceSchedule`) and how one schedule is played end to end under real SIGKILLs
on the harness's one engine (:func:`play`, :func:`.source_run.run_source`)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from harness.conformance.source_e2e import KILL_POINTS
from harness.conformance.source_run import SourceOutcome, python_source_spec, run_source

#: Rows the context adds while a killed driver is down (data keeps arriving).
DOWN_ROWS = 5
MAX_ROWS = 40


@dataclass(frozen=True)
class SourceSubject:
    """The source under test: ``source`` (``path.py:Class``), ``context`` (``path.py:function`` or ``None``)
    and the source's options."""

    source: str
    context: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    def load(self) -> tuple[Any, Any, Any]:
        """(the DataSource class, its :class:`Ref`, the context factory); ``LoadError`` names a bad reference,
        ``ValueError`` says what is missing."""
        from harness.sources.loading import load

        cls, ref = load(self.source, "source")
        if not self.context:
            raise ValueError(
                f"chaos --source {self.source}: give --context path.py:function, a factory of a context that adds "
                "data (a campaign draws how much data each round adds)"
            )
        return cls, ref, load(self.context, "--context")[0]

    def command(self) -> str:
        parts = ["--source", self.source, *(["--context", self.context] if self.context else [])]
        parts += [f"--option {k}={v}" for k, v in sorted(self.options.items())]
        return " ".join(parts)


@dataclass(frozen=True)
class SourceSchedule:
    """``rounds``: per round, the rows the context adds and the crash point of the batch that round plans
    where the driver is SIGKILLed (``None``: no kill)."""

    rounds: tuple[tuple[int, str | None], ...]

    def describe(self) -> str:
        parts = [f"{rows} rows" + (f" + kill at {point}" if point else "") for rows, point in self.rounds]
        return f"{len(self.rounds)} round(s): " + "; ".join(parts)

    @property
    def kills(self) -> int:
        return sum(1 for _, point in self.rounds if point)


def source_schedules(max_rounds: int, max_faults: int) -> st.SearchStrategy[SourceSchedule]:
    """Schedules that shrink towards one round, one row and no kill."""
    round_ = st.tuples(st.integers(1, MAX_ROWS), st.none() | st.sampled_from(KILL_POINTS))
    lists = st.lists(round_, min_size=1, max_size=max(1, max_rounds + 1))
    return lists.filter(lambda rs: sum(1 for _, p in rs if p) <= max_faults).map(lambda rs: SourceSchedule(tuple(rs)))


def play(subject: SourceSubject, schedule: SourceSchedule, run_dir: Path, pool: Any) -> SourceOutcome:
    """One end-to-end run of ``schedule`` in ``run_dir`` on ``pool`` (the context lives beside it)."""
    from harness.sources.contexts import make_context
    from harness.sources.loading import add_import_root
    from harness.sources.reader import SourceUnderTest

    cls, ref, factory = subject.load()
    add_import_root(ref.root)
    source = SourceUnderTest(cls, subject.options)
    ctx = make_context(factory, run_dir.parent / f"{run_dir.name}-context")
    try:
        spec = python_source_spec(source, ref, ctx.options())

        def feed(r: int) -> dict[str, int]:
            rows = schedule.rounds[r][0] if r < len(schedule.rounds) else DOWN_ROWS
            ctx.add_data(rows)
            return {"rows": rows}

        points = [point for _, point in schedule.rounds]
        return run_source(
            run_dir, spec, feed, len(schedule.rounds), points, lambda m: None, kills_optional=True, pool=pool
        )
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
    counted as ``stalled`` rounds, as the kit's end-to-end check judges it."""
    counts = outcome.result.counts() if outcome.result else {}
    if outcome.verdict == "exactly-once" and outcome.stalls:
        return "violated", {**counts, "stalled": len(outcome.stalls)}
    return outcome.verdict, counts


def as_ref(obj: Any) -> str:
    """``obj`` as a ``path/to/module.py:Attr`` reference that child processes can load (a string is returned
    unchanged): what the pytest forms store when they are given the class or the function itself."""
    import inspect
    import sys

    if obj is None or isinstance(obj, str):
        return obj  # type: ignore[no-any-return]
    from harness.sources.loading import ref_of

    ref = ref_of(obj)  # LoadError for an object of __main__
    return f"{inspect.getfile(sys.modules[ref.module])}:{ref.attr}"
