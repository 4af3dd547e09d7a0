"""Bundles of source chaos campaigns: the failing example's run directory and a ``bundle.json`` with
``"kind": "source"``; ``python -m harness replay BUNDLE`` reruns its schedule and compares.

A context-less source's data arrives by itself (a clock, a live feed), so a replay reruns the same schedule
(rounds, batches, kills) over whatever data arrives then: it reproduces when the verdict and the anomaly sides
(:func:`replay_key`) are the same, and also says how often the anomalous rows were the same. A bundle with a
context compares rows.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from harness.conformance.source.run import SourceOutcome
from harness.conformance.source.schedule import (
    SourceSchedule,
    SourceSubject,
    anomalies_of,
    anomaly_keys,
    counts_text,
    play,
    verdict_of,
)
from harness.engine.commandline import harness_command

BUNDLE_FILE = "bundle.json"


def write_source_bundle(
    subject: SourceSubject, schedule: SourceSchedule, seed: int, outcome: SourceOutcome, dest: Path
) -> Path:
    """The example's run directory and ``bundle.json`` (``"kind": "source"``: subject, schedule, seed,
    verdict, anomalies, kills) in ``dest``."""
    from harness.chaos.bundle import versions
    from harness.verdict.rowdiff import DIFF_FILE, row_diff

    anomalies, (verdict, counts) = anomalies_of(outcome), verdict_of(outcome)
    shutil.copytree(outcome.run_dir, dest, dirs_exist_ok=True)
    doc = {
        "kind": "source",
        "subject": asdict(subject),
        **schedule.to_doc(),
        "contextless": subject.contextless,
        "seed": seed,
        "versions": versions(),
        "verdict": verdict,
        "anomaly_counts": counts,
        "anomalies": anomalies,
        "kills_fired": outcome.kills_fired,
        "replay": harness_command("replay", dest),
    }
    (dest / BUNDLE_FILE).write_text(json.dumps(doc, indent=2, default=str))
    diff = row_diff(anomalies)
    if diff:
        (dest / DIFF_FILE).write_text(diff + "\n")
    return dest


def load_source_bundle(doc: dict[str, Any]) -> tuple[SourceSubject, SourceSchedule]:
    """The subject and schedule of a source bundle's ``bundle.json`` document."""
    subject = SourceSubject(**doc["subject"])
    return subject, SourceSchedule.from_doc(doc)


#: Rows in the sink beyond the oracle's: which of these kinds a re-read shows as depends on where the oracle's
#: end falls (a re-read batch that is also the newest committed one leaves its rows outside the oracle's range).
EXTRA_ROWS = frozenset({"duplicate", "phantom", "uncommitted-visible"})


def replay_key(verdict: str, anomalies: list[dict[str, Any]], contextless: bool) -> tuple[Any, ...]:
    """What a replay must match: the verdict and the anomalous rows with their counts, or for a context-less
    source (whose rows depend on when they arrive) the verdict and the anomaly sides: extra rows (duplicate,
    phantom, uncommitted-visible) are one side, each other kind (lost, wrong-value, ...) its own."""
    if contextless:
        return verdict, sorted({"extra rows" if a["kind"] in EXTRA_ROWS else a["kind"] for a in anomalies})
    return verdict, anomaly_keys(anomalies)


REPLAY_NOTE = (
    "context-less source: a replay reproduces the schedule (rounds, batches, kills), not the same rows; "
    "it counts as reproduced when the verdict and the anomaly sides are the same (extra rows: duplicate, "
    "phantom or uncommitted-visible; missing rows: lost; each other kind by itself)"
)


def replay_source_bundle(
    doc: dict[str, Any], times: int, work_dir: Path, echo: Callable[[str], None]
) -> tuple[int, int, str]:
    """Rerun a source bundle's schedule ``times`` times on one driver pool, comparing verdict and anomalies
    with the recorded ones. Returns the exit code (1 if every replay reproduced a violation, 0 if it
    reproduced a pass, 2 if any replay differed or gave no verdict; a context-less source's violation that
    reproduced at least once: 1), the replays that reproduced it (:func:`replay_key`) and the last replay's
    verdict. ``KeyError`` / ``TypeError`` / ``ValueError`` for a document that is not a source bundle,
    ``LoadError`` / ``ValueError`` when its source or context cannot be loaded."""
    from harness.engine.pool import DriverPool
    from harness.spark.session import DEFAULT_MASTER
    from harness.verdict.rowdiff import row_diff

    subject, schedule = load_source_bundle(doc)
    subject.load()  # a source that moved fails here, before any JVM starts
    free = subject.contextless
    want = replay_key(doc["verdict"], doc["anomalies"], free)
    rows_want = anomaly_keys(doc["anomalies"])
    reproduced, same_rows, last = 0, 0, "unknown"
    if free:
        echo(REPLAY_NOTE)
    with DriverPool(work_dir / "logs", DEFAULT_MASTER, {}) as pool:
        for i in range(1, times + 1):
            outcome = play(subject, schedule, work_dir / f"replay-{i}", pool)
            anomalies = anomalies_of(outcome)
            last, counts = verdict_of(outcome)
            same = replay_key(last, anomalies, free) == want
            reproduced += same
            same_rows += same and anomaly_keys(anomalies) == rows_want
            why = f": {outcome.error.splitlines()[0]}" if outcome.error else ""
            echo(f"replay {i}/{times}: {'reproduced' if same else 'DIFFERENT'}: {last} ({counts_text(counts)}){why}")
            if i == times and (diff := row_diff(anomalies)):
                echo(diff)
    rows = f"; the same anomalous rows {same_rows}/{times}" if free else ""
    echo(f"reproduced {reproduced}/{times} time(s){rows} ({schedule.describe()})")
    if free and reproduced and doc["verdict"] == "violated":
        return 1, reproduced, last  # the schedule breaks the source, even if not at every replay
    if reproduced < times:
        return 2, reproduced, last
    return (1 if doc["verdict"] == "violated" else 0), reproduced, last
