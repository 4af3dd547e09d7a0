"""Losses the run's configuration allows: rows the oracle expects that the query was configured to skip.

Spark's Kafka source with ``failOnDataLoss=false`` skips records deleted (aged out by retention) before it read
them, and says so only in a log warning. The oracle still expects those rows (it regenerates deleted records
from the tap), so the checker finds them ``lost``; a lost row whose source partition and offset lie in an
:class:`~harness.verdict.checker.AllowedLoss` is moved to ``CheckResult.allowed``: reported, with the setting
that allows it and where it was lost, but not a violation. Every other anomaly stays one.

A fresh checkpoint (the nemesis ``reset_checkpoint``) makes the query a new one that reads its source from its
starting offsets: a row the old query had planned to read may then be delivered once more per reset
(:class:`~harness.verdict.checker.AllowedReplay`), so :func:`allow_replays` moves those ``duplicate`` rows to
``allowed`` too. A row delivered more often than that, and every lost row, stays a violation. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from harness.verdict.checker import AllowedLoss, AllowedReplay, Anomaly, CheckResult


def covering(anomaly: Anomaly, allowed: Sequence[AllowedLoss]) -> AllowedLoss | None:
    """The allowance a ``lost`` anomaly falls under (by its provenance partition and offset), else ``None``."""
    if anomaly.kind != "lost" or anomaly.partition is None or anomaly.offset is None or anomaly.observed_count:
        return None
    return next((w for w in allowed if w.partition == anomaly.partition and w.start <= anomaly.offset < w.end), None)


def _split(anomalies: Sequence[Anomaly], allowed: Callable[[Anomaly], bool]) -> tuple[list[Anomaly], list[Anomaly]]:
    """``(kept, moved)``: the anomalies still violations, and those ``allowed`` accepts, each in order."""
    kept: list[Anomaly] = []
    moved: list[Anomaly] = []
    for a in anomalies:
        (moved if allowed(a) else kept).append(a)
    return kept, moved


def allow_losses(result: CheckResult, allowed: Sequence[AllowedLoss]) -> CheckResult:
    """``result`` with the lost rows that ``allowed`` covers moved to ``allowed``, and the allowances they fall
    under listed (``allowed_losses``); valid when no other anomaly is left. An ``unknown`` result and a result
    without allowances come back unchanged."""
    if not allowed or result.valid == "unknown":
        return result
    kept, moved = _split(result.anomalies, lambda a: covering(a, allowed) is not None)
    used = [w for w in allowed if any(covering(a, [w]) is not None for a in moved)]
    return dataclasses.replace(
        result,
        valid=not kept,
        anomalies=kept,
        allowed=[*result.allowed, *moved],
        allowed_losses=[*result.allowed_losses, *used],
    )


def replays_covering(anomaly: Anomaly, replays: Sequence[AllowedReplay]) -> list[AllowedReplay]:
    """The replays a ``duplicate`` anomaly falls under, when they are enough for its extra copies; else ``[]``."""
    if anomaly.kind != "duplicate" or anomaly.partition is None or anomaly.offset is None:
        return []
    under = [r for r in replays if r.partition == anomaly.partition and anomaly.offset < r.end]
    return under if 0 < anomaly.observed_count - anomaly.expected_count <= len(under) else []


def allow_replays(result: CheckResult, replays: Sequence[AllowedReplay]) -> CheckResult:
    """``result`` with the duplicates that ``replays`` explain moved to ``allowed`` and those replays listed
    (``allowed_replays``); valid when no other anomaly is left. An ``unknown`` result and a result without
    replays come back unchanged."""
    if not replays or result.valid == "unknown":
        return result
    kept, moved = _split(result.anomalies, lambda a: bool(replays_covering(a, replays)))
    used = [r for r in replays if any(r in replays_covering(a, replays) for a in moved)]
    return dataclasses.replace(
        result,
        valid=not kept,
        anomalies=kept,
        allowed=[*result.allowed, *moved],
        allowed_replays=[*result.allowed_replays, *used],
    )


def allowed_summary(result: CheckResult) -> str:
    """``12 row(s) lost as allowed by failOnDataLoss=false (topic T partition 0 offsets [20, 32))``, ``40 row(s)
    delivered again as allowed by a fresh checkpoint (...)``; ``""`` when nothing was allowed."""
    if not result.allowed:
        return ""
    parts = []
    for setting in dict.fromkeys(w.setting for w in result.allowed_losses):
        windows = [w for w in result.allowed_losses if w.setting == setting]
        rows = sum(1 for a in result.allowed if covering(a, windows) is not None)
        parts.append(f"{rows} row(s) lost as allowed by {setting} ({'; '.join(w.describe() for w in windows)})")
    for setting in dict.fromkeys(r.setting for r in result.allowed_replays):
        replays = [r for r in result.allowed_replays if r.setting == setting]
        rows = sum(1 for a in result.allowed if replays_covering(a, replays))
        where = "; ".join(dict.fromkeys(r.describe() for r in replays))
        parts.append(f"{rows} row(s) delivered again as allowed by {setting} ({where})")
    return ", ".join(parts)
