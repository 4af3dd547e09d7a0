"""Pure admission control: how far one micro-batch may advance per partition.

Shared by the replayable source (at run time) and the schedule builder (to
predict batch boundaries before anything runs), so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping

Offsets = dict[int, int]


def offsets_to_json(offsets: Mapping[int, int]) -> dict[str, int]:
    """The source's offset dict as Spark stores it: keys ``"0"``, ``"1"``, ...
    in partition order (equal offsets always serialise identically)."""
    return {str(p): int(offsets[p]) for p in sorted(offsets)}


def offsets_from_json(raw: Mapping[str, object]) -> Offsets:
    """Inverse of :func:`offsets_to_json`; raises ``ValueError`` on bad input."""
    try:
        return {int(k): int(v) for k, v in raw.items()}  # type: ignore[call-overload]
    except (TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"not a replayable-source offset: {raw!r}") from exc


def admit(start: Mapping[int, int], available: Mapping[int, int], max_offsets: int | None) -> Offsets:
    """End offsets of the next batch from ``start`` given what is ``available``.

    With ``max_offsets=None`` everything available is admitted. Otherwise at
    most ``max_offsets`` offset units in total are admitted, shared fairly
    across partitions that have a backlog (lower partition numbers get the
    remainder). Never moves any partition backwards; deterministic.
    """
    end = {p: max(int(start.get(p, 0)), int(available.get(p, 0))) for p in set(start) | set(available)}
    if max_offsets is None:
        return end
    if max_offsets < 1:
        raise ValueError("max_offsets must be >= 1")
    result = {p: int(start.get(p, 0)) for p in end}
    budget = max_offsets
    while budget > 0:
        pending = sorted(p for p in end if result[p] < end[p])
        if not pending:
            break
        share, extra = divmod(budget, len(pending))
        for i, p in enumerate(pending):
            take = min(end[p] - result[p], share + (1 if i < extra else 0))
            result[p] += take
            budget -= take
    return result


def plan_batches(
    start: Mapping[int, int], available: Mapping[int, int], max_offsets: int | None
) -> list[tuple[Offsets, Offsets]]:
    """The sequence of ``(start, end)`` ranges a query running until caught up
    will plan, batch by batch (empty batches are never planned)."""
    batches: list[tuple[Offsets, Offsets]] = []
    cur = dict(start)
    while True:
        nxt = admit(cur, available, max_offsets)
        if all(nxt[p] == cur.get(p, 0) for p in nxt):
            return batches
        batches.append((dict(cur), nxt))
        cur = nxt
