"""Nemesis actions between two runs of the query, while none runs: on the checkpoint
(:mod:`fault_injectors.nemesis`) or on the source's input (a source's own ``apply_nemesis``, e.g. Kafka records
aged out before the query read them, or partitions added to the topic: :func:`scenarios.sources.source_nemeses`).

A source nemesis returns a :class:`~scenarios.sources.SourceDamage`; what it lost becomes, for the verdict,
either losses the query's configuration allows (:class:`~harness.verdict.checker.AllowedLoss`) or, when the
query refused to go on, the first line of the run's error (:func:`loss_first`). A checkpoint nemesis after
which the query reads its source from the start (:data:`~fault_injectors.nemesis.REPLAYS_SOURCE`) records, for
a source whose rows carry their provenance, how far the old query had planned to read: the rows below may come
again (:class:`~harness.verdict.checker.AllowedReplay`); past it, and for other sources, nothing is allowed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fault_injectors.nemesis import REPLAYS_SOURCE, NemesisError, apply_nemesis, checkpoint_nemeses
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.errors import HarnessFailure
from harness.inspector import CheckpointError
from harness.verdict.check import batch_spans
from harness.verdict.checker import AllowedLoss, AllowedReplay
from scenarios.base import Scenario
from scenarios.sources import SourceDamage, SourceRun, source_nemeses


@dataclass(frozen=True)
class Applied:
    """A nemesis that was applied: what it did, and for a source nemesis its damage."""

    name: str
    description: str
    damage: SourceDamage | None = None
    #: For a nemesis that makes the query read its source from the start: per partition, the end of what the old
    #: query had planned to read (:func:`delivered_before`).
    replayed: tuple[tuple[int, int], ...] = ()

    @property
    def target(self) -> str:
        """``checkpoint`` or ``source``: what the nemesis damaged (the fault's point in the report)."""
        return "checkpoint" if self.damage is None else "source"

    @property
    def benign(self) -> bool:
        """Whether the query must carry on after it (:attr:`SourceDamage.benign`); checkpoint damage never is."""
        return self.damage is not None and self.damage.benign


def source_run(paths: RunPaths, spec: RunSpec, scenario: Scenario) -> SourceRun:
    """The source's wiring for the run in ``paths``, as the driver builds it."""
    resources = json.loads(paths.resources.read_text()) if paths.resources.exists() else {}
    return SourceRun(
        config=scenario.source_config(spec.seed),
        tap=str(paths.tap),
        input_dir=str(paths.input),
        checkpoint=str(paths.checkpoint),
        fault_dir=str(paths.faults),
        max_rows_per_batch=spec.effective_batch_rows(scenario.max_rows_per_batch),
        write_points=scenario.source_write_points,
        resources=resources,
    )


class NemesisFailed(HarnessFailure, RuntimeError):
    """A nemesis could not run for another reason than having nothing to damage (which is
    :class:`NemesisError`): the disk, the source's server, an unreadable log. A harness failure, never a
    discarded example."""


#: How a run says its nemesis found nothing to damage (a campaign discards such an example).
INAPPLICABLE = "could not be applied: "


def inapplicable(name: str, why: object) -> str:
    """The run's error for the nemesis ``name`` that could not act (``why``: the :class:`NemesisError`)."""
    return f"nemesis {name} {INAPPLICABLE}{why}"


def is_inapplicable(error: str) -> bool:
    """Whether a run's ``error`` is :func:`inapplicable`'s."""
    head = error.split("\n", 1)[0]
    return head.startswith("nemesis ") and INAPPLICABLE in head


def delivered_before(paths: RunPaths) -> tuple[tuple[int, int], ...]:
    """Per partition, the end of what the query had planned to read (its offset log, uncommitted batches
    included): no row past it can have been delivered before the checkpoint is reset."""
    try:
        spans = batch_spans(paths.checkpoint)
    except CheckpointError as exc:
        raise NemesisFailed(f"the checkpoint's offset log is unreadable: {exc}") from None
    ends: dict[int, int] = {}
    for span in spans:
        for partition, end in span.end.items():
            ends[partition] = max(end, ends.get(partition, 0))
    return tuple(sorted(ends.items()))


def apply_between_runs(name: str, paths: RunPaths, spec: RunSpec, scenario: Scenario) -> Applied:
    """Apply the nemesis ``name`` to the run in ``paths``: :class:`NemesisError` when it finds nothing to damage,
    :class:`NemesisFailed` when it cannot run."""
    if name in checkpoint_nemeses():
        replayed = delivered_before(paths) if name in REPLAYS_SOURCE and scenario.source.provenance else ()
        try:
            return Applied(name, apply_nemesis(name, paths.checkpoint), replayed=replayed)
        except OSError as exc:
            raise NemesisFailed(str(exc)) from None
    if name not in source_nemeses(scenario.source):
        raise NemesisFailed(f"unknown nemesis {name!r} for {scenario.source.describe()}")
    apply: Any = getattr(scenario.source, "apply_nemesis")  # noqa: B009 (a source's optional method)
    try:
        damage: SourceDamage = apply(name, source_run(paths, spec, scenario))
    except NemesisError:
        raise
    except Exception as exc:  # the source's own errors (a broker refusing a request): one line
        raise NemesisFailed(f"{type(exc).__name__}: {exc}") from None
    return Applied(name, damage.description, damage)


def allowed_losses(applied: Sequence[Applied]) -> list[AllowedLoss]:
    """What the query may skip: the lost ranges of damages its configuration allows."""
    return [
        AllowedLoss(p, s, e, a.damage.where, a.damage.setting)
        for a in applied
        if a.damage is not None and a.damage.allowed
        for p, s, e in a.damage.lost
    ]


def allowed_replays(applied: Sequence[Applied]) -> list[AllowedReplay]:
    """What the query may deliver again: per fresh start of its source, the rows the old query had planned."""
    return [
        AllowedReplay(p, end, f"a fresh checkpoint (nemesis {a.name}: the query reads its source from the start)")
        for a in applied
        for p, end in a.replayed
        if end > 0
    ]


def loss_first(error: str, applied: Sequence[Applied]) -> str:
    """``error`` of a query that failed loudly, led by the records a source nemesis deleted before the query
    read them (which the query's setting made it refuse to skip), when there were any."""
    refused = [a for a in applied if a.damage is not None and a.damage.lost and not a.damage.allowed]
    if not refused:
        return error
    lines = [
        f"records deleted before the query read them: {a.damage.lost_text()} (nemesis {a.name}); the query "
        f"refused to skip them ({a.damage.setting or 'its configuration'})"
        for a in refused
        if a.damage is not None
    ]
    return "\n".join([*lines, error])
