"""Replay bundles: everything needed to reproduce a failing run, in one directory.

``bundle.json`` holds the spec (seed, data per round, every fault rule,
nemesis, master, confs), the schedule as printed, the fault plan, versions
(harness, PySpark, Python, Java), the verdict with its anomaly list and the
inspector summary; ``row_diff.txt`` shows the anomalous keys' rows (chispa's table, plain text);
``timeline.html`` draws the run (drivers, batches, kills, anomalies linked to their batches;
:mod:`harness.timeline.page`); the
run directory's history, ledger, driver logs and
checkpoint are copied beside it. ``python -m harness replay BUNDLE`` reruns
the spec from scratch and compares verdict and anomalies. A bundle with a
timed kill says ``"deterministic": false`` and where each timed kill landed
(``timed_kills``: planned and measured ms after ``offsets/N``); its replays
land a few ms elsewhere, so ``replay --times N`` reports a reproduction rate.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any

from fault_injectors.plan import TIMED_POINT
from harness.engine.commandline import harness_command
from harness.engine.outcome import RunOutcome
from harness.engine.spec import RunSpec
from harness.timeline.page import BUNDLE_PAGE, write_outcome_page
from harness.verdict.rowdiff import DIFF_FILE, row_diff

BUNDLE_FILE = "bundle.json"


def versions() -> dict[str, str]:
    def pkg(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30).stderr.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        java = "unknown"
    return {
        "harness": pkg("spark-exactly-once-harness"),
        "pyspark": pkg("pyspark"),
        "hypothesis": pkg("hypothesis"),
        "python": platform.python_version(),
        "java": java,
    }


def anomaly_keys(anomalies: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What must match for a replay to count as reproducing: kind, batch and row identity (for a
    ``state-mismatch``, which has no provenance, the state row itself and its counts)."""

    def state_row(a: dict[str, Any]) -> str:
        if a["kind"] != "state-mismatch":
            return ""
        return repr((sorted((a.get("row") or {}).items()), a["expected_count"], a["observed_count"]))

    return sorted((a["kind"], a["batch_id"], a["partition"], a["offset"], a["seq"], state_row(a)) for a in anomalies)


def timed_landings(kills_fired: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The timed kills among a run's fired faults: id, batch, and planned and measured ms after ``offsets/N``."""
    return [
        {"id": k["id"], "batch": k["batch"], **{n: k["context"].get(n) for n in ("planned_ms", "measured_ms")}}
        for k in kills_fired
        if k["point"] == TIMED_POINT
    ]


def write_bundle(outcome: RunOutcome, dest: Path, report: dict[str, Any]) -> Path:
    """Write a bundle for ``outcome`` (whose run directory must still exist) to ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    run = outcome.paths.root
    for name in ("history.jsonl", "spec.json", "tap.json", "faults", "logs", "checkpoint", "oracle", "events"):
        src = run / name
        if src.is_dir():
            shutil.copytree(src, dest / name, dirs_exist_ok=True)
        elif src.exists():
            shutil.copy2(src, dest / name)
    doc = {
        "spec": asdict(outcome.spec),
        "scenario": outcome.spec.scenario,
        "seed": outcome.spec.seed,
        "schedule": outcome.schedule_lines,
        "fault_plan": json.loads((run / "faults" / "plan.json").read_text())
        if (run / "faults" / "plan.json").exists()
        else None,
        "versions": versions(),
        "verdict": report["verdict"],
        "anomaly_counts": report["anomaly_counts"],
        "anomalies": report["anomalies"],
        "kills_fired": report["kills_fired"],
        "deterministic": outcome.spec.deterministic,
        "timed_kills": timed_landings(report["kills_fired"]),
        "inspector": report.get("inspector"),
        "replay": harness_command("replay", dest),
    }
    (dest / BUNDLE_FILE).write_text(json.dumps(doc, indent=2, default=str))
    diff = row_diff(report["anomalies"])
    if diff:
        (dest / DIFF_FILE).write_text(diff + "\n")
    try:
        write_outcome_page(dest / BUNDLE_PAGE, outcome, run_dir=dest)
    except Exception as exc:  # the bundle replays without its picture; say why it has none
        (dest / "timeline.txt").write_text(f"timeline.html was not drawn: {type(exc).__name__}: {exc}\n")
    return dest


def load_bundle(path: Path) -> tuple[RunSpec, dict[str, Any]]:
    """The spec and the recorded document of a bundle (directory or its bundle.json).
    Raises ``ValueError`` naming the file when it is not a bundle."""
    file = path / BUNDLE_FILE if path.is_dir() else path
    try:
        doc = json.loads(file.read_text())
        return RunSpec.from_dict(doc["spec"]), doc
    except FileNotFoundError:
        raise ValueError(f"{file}: no such bundle file (give a bundle directory or its bundle.json)") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{file}: not a harness replay bundle ({exc})") from None
