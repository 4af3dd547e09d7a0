"""The step census: what the user's sink code does, step by step, in a fault-free run.

:func:`take_census` plays a scenario (or a sink under test, through
:mod:`harness.conformance.sink.scenario`) without faults, with every wrapped
sink call traced (:mod:`fault_injectors.steps`), and returns each batch's
steps per wrapper. ``sink.step`` faults are then planned only where a k-th step
exists, and by default only at the calls' effect boundaries
(:mod:`fault_injectors.effects`: one kill per run of effect-free steps), since a
kill after an effect-free step repeats the kill after the step before it.
``python -m harness census`` prints it, so users see where kills land.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fault_injectors.effects import is_effect
from fault_injectors.plan import STEP_POINT, FaultRule
from fault_injectors.steps import CallCensus, first_calls, read_census
from harness.engine.rundir import safe_name
from harness.engine.spec import RunSpec
from harness.errors import HarnessFailure

if TYPE_CHECKING:
    from harness.engine.pool import DriverPool

#: Key of one traced call in a census: ``(wrapper, batch, partition)``.
CallKey = tuple[str, int | None, int | None]
#: Where a ``sink.step`` fault can be aimed: ``(wrapper, partition, step, description)``.
Target = tuple[str, int | None, int, str]


class CensusError(HarnessFailure, RuntimeError):
    """The census run gave no verdict, or the sink has no Python code to trace."""


@dataclass(frozen=True)
class Census:
    """Each fault-free call's steps, by ``(wrapper, batch, partition)``."""

    scenario: str
    seed: int
    calls: dict[CallKey, CallCensus] = field(default_factory=dict)

    def batches(self) -> list[int]:
        return sorted({b for _, b, _ in self.calls if b is not None})

    def of_batch(self, batch: int) -> dict[CallKey, CallCensus]:
        return {k: c for k, c in sorted(self.calls.items(), key=_order) if k[1] == batch}

    def targets(self, batch: int) -> list[Target]:
        """Every ``(wrapper, partition, step, description)`` of ``batch``, in call order."""
        return [(w, p, k, d) for (w, _, p), c in self.of_batch(batch).items() for k, d in enumerate(c.steps, 1)]

    def boundary_targets(self, batch: int) -> list[Target]:
        """The targets of ``batch`` at its calls' effect boundaries (:func:`fault_injectors.effects.boundaries`):
        one per distinct kill experiment, in call order."""
        return [(w, p, k, c.steps[k - 1]) for (w, _, p), c in self.of_batch(batch).items() for k in c.boundaries()]

    def inside_effects(self, batch: int) -> set[Target]:
        """The boundary targets of ``batch`` that land inside a running effect call (sampled last)."""
        return {(w, p, k, c.steps[k - 1]) for (w, _, p), c in self.of_batch(batch).items() for k in c.inside_effects()}

    def render(self, limit: int | None = None) -> str:
        """Per batch and wrapper: the step count and effect boundaries, then ``k. description`` lines (at most
        ``limit`` per call), ``*`` marking an effect and ``>`` a boundary."""
        if not self.calls:
            return f"census of {self.scenario} (seed {self.seed}): no wrapped Python sink call ran"
        lines = [f"census of {self.scenario} (seed {self.seed}): steps of the sink's own code per call"]
        for batch in self.batches():
            for (wrapper, _, partition), call in self.of_batch(batch).items():
                where = f", partition {partition}" if partition is not None else ""
                marks = set(call.boundaries())
                lines.append(
                    f"batch {batch}, {wrapper}{where}: {len(call.steps)} step(s), {len(marks)} effect boundary(ies)"
                )
                shown = call.steps if limit is None else call.steps[:limit]
                lines += [
                    f" {'>' if k in marks else ' '}{k:>3}.{'*' if is_effect(d) else ' '} {d}"
                    for k, d in enumerate(shown, 1)
                ]
                if len(shown) < len(call.steps):
                    lines.append(f"  ... and {len(call.steps) - len(shown)} more (--all shows every step)")
        lines.append("* may change something outside the driver; > a distinct kill point (effect boundary)")
        lines.append(f"kill after step K of batch N: --kill {STEP_POINT}:N:K[:WRAPPER[:PARTITION]]")
        return "\n".join(lines)


def _order(item: tuple[CallKey, CallCensus]) -> tuple[int, str, int]:
    (wrapper, batch, partition), _ = item
    return (-1 if batch is None else batch, wrapper, -1 if partition is None else partition)


def take_census(
    scenario: str,
    seed: int,
    *,
    rounds: int | None = None,
    rows: Sequence[Sequence[int]] | None = None,
    batch_rows: int | None = None,
    run_dir: Path | None = None,
    echo: Callable[[str], None] | None = None,
    pool: DriverPool | None = None,
) -> Census:
    """Run ``scenario`` fault-free with a census and return it (``batch_rows``: as ``RunSpec.batch_rows``). The
    run directory is ``run_dir`` (kept), or a
    temp dir removed once the census is read. ``pool`` lends a running driver (a campaign's); without it the
    run starts its own. Raises :class:`CensusError` when the run gives no verdict (the message says why and
    where the run directory is, which is then kept)."""
    from harness.engine.runner import run_spec

    root = run_dir or Path(tempfile.mkdtemp(prefix=f"harness-census-{safe_name(scenario)}-"))
    spec = RunSpec(
        scenario,
        seed,
        kills=0,
        rounds=rounds,
        rows=tuple(tuple(r) for r in rows) if rows is not None else None,
        batch_rows=batch_rows,
        census=True,
    )
    outcome = run_spec(spec, root, echo=echo or (lambda m: None), pool=pool)
    if outcome.verdict == "unknown":
        why = (outcome.error or (outcome.result.error if outcome.result else "") or "no verdict").splitlines()[0]
        raise CensusError(f"the census run of {scenario} gave no verdict: {why} (run directory {root})")
    census = Census(scenario, seed, first_calls(read_census(root / "faults")))
    if run_dir is None:
        shutil.rmtree(root, ignore_errors=True)
    return census


def step_rules(batch_of: Callable[[int], int], targets: Sequence[Target], action: str) -> list[FaultRule]:
    """One ``sink.step`` rule per target, target *i* in batch ``batch_of(i)``."""
    return [
        FaultRule(f"step-{i + 1}", STEP_POINT, batch_of(i), partition, action=action, step=k, wrapper=wrapper)
        for i, (wrapper, partition, k, _) in enumerate(targets)
    ]


def sample_targets(
    targets: Sequence[Target], limit: int | None, seed: int, later: Collection[Target] = ()
) -> list[Target]:
    """All ``targets`` when ``limit`` is ``None`` or not smaller; else ``limit`` of them, in census order: every
    target not in ``later`` first (a seeded sample when they alone exceed ``limit``), the rest of the budget a
    seeded sample of ``later``. No target is taken twice: the same kill after the same step is the same run."""
    if limit is None or limit >= len(targets):
        return list(targets)
    rng = random.Random(seed)
    first = [i for i, t in enumerate(targets) if t not in later]
    rest = [i for i, t in enumerate(targets) if t in later]
    keep = rng.sample(first, limit) if len(first) >= limit else first + rng.sample(rest, limit - len(first))
    return [targets[i] for i in sorted(keep)]


#: What a campaign's strategy learns from a census: per batch id, each wrapped call's
#: ``(wrapper, partition, effect boundaries)`` (its distinct kill points, step numbers in order), calls without
#: steps left out.
StepCalls = dict[int, list[tuple[str, int | None, tuple[int, ...]]]]


class CensusCache:
    """Exact censuses for a campaign's drawn data, one fault-free run per distinct ``(seed, rows)``.

    A census depends only on the scenario, the seed, the rows per round and the rows a batch may take (the
    batches are predicted
    from them and the sink is deterministic), so each is taken once, in the campaign's driver ``pool``.
    Calling the cache gives :data:`StepCalls`, what ``chaos_specs(steps=...)`` takes.
    """

    def __init__(self, scenario: str, pool: DriverPool, work_dir: Path, say: Callable[[str], None]) -> None:
        self.scenario, self.pool, self.work_dir, self.say = scenario, pool, work_dir, say
        self._cache: dict[tuple[int, tuple[tuple[int, ...], ...], int | None], StepCalls] = {}
        self.runs = 0
        self.seconds = 0.0

    @staticmethod
    def _key(
        seed: int, rows: Sequence[Sequence[int]], batch_rows: int | None
    ) -> tuple[int, tuple[tuple[int, ...], ...], int | None]:
        return seed, tuple(tuple(r) for r in rows), batch_rows

    def has(self, seed: int, rows: Sequence[Sequence[int]], batch_rows: int | None = None) -> bool:
        """Whether the census of this data was taken already."""
        return self._key(seed, rows, batch_rows) in self._cache

    def __call__(self, seed: int, rows: Sequence[Sequence[int]], batch_rows: int | None = None) -> StepCalls:
        key = self._key(seed, rows, batch_rows)
        if key not in self._cache:
            self.runs += 1
            t0 = time.monotonic()
            run_dir = self.work_dir / f"census-{self.runs:04d}"
            census = take_census(
                self.scenario, seed, rows=key[1], batch_rows=batch_rows, run_dir=run_dir, pool=self.pool
            )
            shutil.rmtree(run_dir, ignore_errors=True)
            calls: StepCalls = {}
            counts: dict[int, list[str]] = {}
            for (wrapper, batch, partition), call in sorted(census.calls.items(), key=_order):
                if batch is not None and call.steps:
                    calls.setdefault(batch, []).append((wrapper, partition, tuple(call.boundaries())))
                    counts.setdefault(batch, []).append(f"{len(call.boundaries())}/{len(call.steps)}")
            self._cache[key] = calls
            self.seconds += time.monotonic() - t0
            shown = ", ".join(f"{b}:{'+'.join(c)}" for b, c in counts.items()) or "none"
            self.say(f"[ census] {time.monotonic() - t0:5.1f}s boundaries/steps per batch {shown}")
        return self._cache[key]
