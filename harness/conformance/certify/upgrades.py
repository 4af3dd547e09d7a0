"""``certify --upgrades``: per row of the programming guide's recovery table, one real pair of pipelines deployed
over a live checkpoint under SIGKILLs, measured next to what the guide says, and ``upgrade-check`` asked first.

Each row plays three things on the shared driver pool, with the row's seed:

1. version 1 alone, 2 rounds: the checkpoint production would have at the deploy;
2. ``upgrade-check`` on it for version 2 (a child process, as a release job runs it): its answer;
3. the upgrade run, 3 rounds: a SIGKILL after ``offsets/3`` is logged, the deploy right after it (batch 3,
   planned by version 1, is replayed by version 2's code), a SIGKILL after ``commits/5``: its verdict (a
   ``graceful`` row deploys after round 2 instead). A run whose query resumed but whose output then could not
   be read (the check failed) is measured as such.

Status: ``agrees`` when the guide says ``allowed`` (or ``conditionally allowed``) and the run held exactly-once,
or ``not allowed`` and Spark refused the restart; every other outcome is flagged: ``differs`` (Spark resumed a
change the guide forbids, or refused or broke one it allows), ``ill-defined`` (the guide predicts nothing).
``check`` says whether ``upgrade-check``'s answer agrees with the verdict (:data:`CHECK_AGREES`): ``risk``
(resumable, the outcome not decided by the checkpoint) agrees with any verdict but a refusal.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.verdict.guide import ALLOWED, CONDITIONAL, NOT_ALLOWED, row

P = "harness.conformance.certify.upgrade_pairs"
#: The verdict of an upgrade run whose query resumed and whose output could not be read back afterwards.
UNREADABLE = "output-unreadable"
#: The verdict of an upgrade run whose new version ran (a replayed batch committed) and then failed loudly.
FAILED_LATER = "failed-after-deploy"
GUIDE = "Structured Streaming Programming Guide > Recovery Semantics after Changes in a Streaming Query"
#: A verdict of the upgrade run -> the answers of ``upgrade-check`` that agree with it.
CHECK_AGREES = {
    "exactly-once": {"resumable", "risk"},
    "upgrade-refused": {"refused"},
    "violated": {"refused", "risk"},
    UNREADABLE: {"refused", "risk"},
    FAILED_LATER: {"refused", "risk"},
}
KILLS = ("after_offsets_logged:3", "after_commit_logged:5")


@dataclass(frozen=True)
class UpgradeRow:
    """One guide row (``rule``) measured on ``scenario`` (version 1, its ``upgrade_to`` version 2)."""

    key: str
    rule: str
    scenario: str
    #: The guide's category when the row does not meet its rule's condition (Avro encoding off): what the
    #: guide then says, for the status.
    unless: str | None = None
    #: Deploy after a graceful stop (after round 2) instead of after the SIGKILL at ``offsets/3``: for a query
    #: Spark cannot restart over a pending batch at all (source evolution on 4.2.0: ``None.get`` in
    #: ``OfflineStateRepartitionUtils.isRepartitionBatch``, version 1 alone after the same kill).
    graceful: bool = False
    #: The upgrade run's kills: the first is the deploy's moment (``after-fault:x1``), unless ``graceful``.
    kills: tuple[str, ...] = KILLS


UPGRADE_ROWS: tuple[UpgradeRow, ...] = (
    UpgradeRow("upgrade:filter", "filter", "upgrade_filter"),
    UpgradeRow("upgrade:projection", "projection-same-schema", f"{P}:V1_PROJECTION"),
    UpgradeRow("upgrade:new-schema", "projection-new-schema", f"{P}:V1_NEW_SCHEMA"),
    UpgradeRow("upgrade:sources", "source-count", f"{P}:V1_SOURCES"),
    UpgradeRow("upgrade:source-type", "source-type", f"{P}:V1_SOURCE_TYPE"),
    UpgradeRow("upgrade:named-source-added", "source-named", f"{P}:V1_NAMED", graceful=True),
    UpgradeRow("upgrade:named-source-removed", "source-named", f"{P}:V1_NAMED_TWO", graceful=True),
    UpgradeRow("upgrade:rate-limit", "source-rate-limit", f"{P}:V1_RATE"),
    UpgradeRow("upgrade:sink-path", "sink-file-path", f"{P}:V1_SINK_PATH"),
    UpgradeRow("upgrade:sink-file-to-kafka", "sink-file-to-kafka", f"{P}:V1_SINK_KIND"),
    UpgradeRow("upgrade:sink-kafka-to-file", "sink-kafka-to-file", f"{P}:V1_SINK_KIND_BACK"),
    # Spark's Kafka source runs one batch a round: the deploy after a kill at offsets/1 (round 2 of 3).
    UpgradeRow("upgrade:topic", "source-subscribed-topics", f"{P}:V1_TOPIC", kills=("after_offsets_logged:1",)),
    UpgradeRow("upgrade:agg-keys", "agg-keys", "upgrade_agg_key"),
    UpgradeRow("upgrade:agg-functions", "agg-functions", "upgrade_agg_function"),
    UpgradeRow("upgrade:dedup-columns", "dedup-columns", f"{P}:V1_DEDUP"),
    UpgradeRow("upgrade:join-type", "join-type", f"{P}:V1_JOIN_TYPE"),
    UpgradeRow("upgrade:join-condition", "join-condition", "upgrade_join_condition"),
    UpgradeRow("upgrade:shuffle-partitions", "conf-shuffle-partitions", f"{P}:V1_PARTITIONS"),
    UpgradeRow("upgrade:tws-schema-avro", "tws-value-schema-evolution", f"{P}:V1_TWS_AVRO"),
    UpgradeRow("upgrade:tws-schema", "tws-value-schema-evolution", f"{P}:V1_TWS", unless=NOT_ALLOWED),
    UpgradeRow("upgrade:fmgws-schema", "fmgws-schema", f"{P}:V1_FMGWS_SCHEMA"),
    UpgradeRow("upgrade:fmgws-timeout", "fmgws-timeout", f"{P}:V1_FMGWS_TIMEOUT"),
    UpgradeRow("upgrade:fmgws-function", "fmgws-function", f"{P}:V1_FMGWS_FUNCTION"),
)
UPGRADE_KEYS = tuple(r.key for r in UPGRADE_ROWS)


def upgrade_status(category: str, verdict: str) -> str:
    """``agrees``, ``differs`` or ``ill-defined`` (see the module docstring); ``not measured`` without a verdict."""
    if verdict not in CHECK_AGREES:
        return "not measured"
    if verdict == UNREADABLE:
        return "differs"  # Spark resumed, and the output is broken: whatever the guide says, it did not refuse
    if verdict == FAILED_LATER:  # Spark stopped the new version loudly, a batch late: nothing silently wrong
        return "agrees" if category == NOT_ALLOWED else "differs"
    if category in (ALLOWED, CONDITIONAL):
        return "agrees" if verdict == "exactly-once" else "differs"
    if category == NOT_ALLOWED:
        return "agrees" if verdict == "upgrade-refused" else "differs"
    return "ill-defined"


def verdict_of(doc: dict[str, Any]) -> str:
    """The run's verdict, or :data:`UNREADABLE` when every query ran and reading the output back failed."""
    if doc["verdict"] == "unknown" and str(doc.get("error") or "").startswith("'check' failed"):
        return UNREADABLE
    if (
        doc["verdict"] == "unknown"
        and doc.get("query_failed")
        and any(k["point"] == "deploy" for k in doc["kills_fired"])
    ):
        return FAILED_LATER
    return str(doc["verdict"])


def _reason(error: str) -> str:
    """The Java exception line of a failed check (``java.io.FileNotFoundException: ...``), else its first line."""
    lines = error.splitlines()
    return next((ln.lstrip(": ").strip() for ln in lines if "Exception:" in ln), lines[0] if lines else "")


def _measured(doc: dict[str, Any]) -> str:
    verdict = verdict_of(doc)
    if verdict == "exactly-once":
        return "resumed, exactly-once"
    if verdict == "upgrade-refused":
        refused = doc["upgrade_refused"]
        if refused["error_class"] not in (None, "STREAM_FAILED"):
            return f"refused: {refused['error_class']}"
        if refused["rule"]:
            return f"refused: an assertion ({refused['rule']['id']})"
        said = str(refused["message"]).split("terminated with exception: ")[-1].split(" SQLSTATE")[0]
        return f"failed at restart, no error class: {said[:80]}"
    if verdict == UNREADABLE:
        return f"resumed; the output cannot be read: {_reason(str(doc['error']))[:160]}"
    if verdict == FAILED_LATER:
        said = str(doc["error"]).split("terminated with exception: ")[-1].splitlines()[0]
        return f"replayed the pending batch, then failed: {said[:120]}"
    if verdict == "violated":
        return "resumed, wrong: " + ", ".join(f"{n} {k}" for k, n in sorted(doc["anomaly_counts"].items()))
    return "no verdict"


def render_upgrades(rows: Sequence[dict[str, Any]], total_s: float) -> str:
    """The table: per row the guide's category, what happened, the status (flagged unless it agrees) and whether
    ``upgrade-check`` said so before the deploy; then the evidence and the guide's words."""
    flags = sum(r["status"] != "agrees" for r in rows)
    checks = sum(r["check"] == "agrees" for r in rows)
    lines = [
        f"certify --upgrades: {len(rows)} row(s) in {total_s:.0f} s; {len(rows) - flags} agree with the guide, "
        f"{flags} flagged; upgrade-check agreed before {checks} of {len(rows)} deploy(s)",
        f"  {'row':<28}{'the guide':<28}{'measured':<52}{'status':<18}upgrade-check",
    ]
    for r in rows:
        status = r["status"] if r["status"] == "agrees" else f"FLAG {r['status']}"
        lines.append(f"  {r['key']:<28}{r['documented']:<28}{r['measured'][:50]:<52}{status:<18}{r['check']}")
    lines.append("evidence:")
    lines += [f"  {r['key']}: {r['measured']}; {r['evidence']}" for r in rows]
    lines.append(f"the guide: {GUIDE}")
    lines += [f'  {r["key"]}: {r["name"]} is {r["documented"]}: "{r["quote"]}"' for r in rows]
    return "\n".join(lines)


def _upgrade_check(checkpoint: Path, new: str, work: Path) -> dict[str, Any]:
    """``python -m harness upgrade-check`` in a child process; its JSON answer (``error`` when it gave none)."""
    out = work / "answer.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "upgrade-check",
            str(checkpoint),
            new,
            "--json",
            str(out),
            "--work",
            str(work),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if not out.exists():
        return {"answer": None, "error": (proc.stderr.strip().splitlines() or ["no answer"])[-1]}
    answer: dict[str, Any] = json.loads(out.read_text())
    return answer


def measure_upgrade(
    r: UpgradeRow, work: Path, seed: int, pool: Any, echo: Callable[[str], None], fixtures: Path | None = None
) -> dict[str, Any]:
    """One row: version 1 alone, ``upgrade-check``, the upgrade run (the module docstring); the table row."""
    from harness.engine.report import to_json
    from harness.engine.runner import run_spec
    from harness.engine.spec import RunSpec, parse_kill_argument
    from scenarios import get_scenario

    t0 = time.monotonic()
    rule, v1 = row(r.rule), get_scenario(r.scenario)
    category = r.unless or rule.category
    documented = f"{r.unless} (unmet)" if r.unless else rule.category
    assert v1.upgrade_to is not None, r
    base = work / r.key.replace(":", "-")
    alone = run_spec(RunSpec(r.scenario, seed, kills=0, rounds=2), base / "v1", echo=lambda m: None, pool=pool)
    answer = _upgrade_check(base / "v1" / "checkpoint", v1.upgrade_to, base / "check")
    kills = r.kills[1:] if r.graceful else r.kills
    faults = tuple(dataclasses.replace(parse_kill_argument(k), id=f"x{i + 1}") for i, k in enumerate(kills))
    deploy = "after-round:2" if r.graceful else "after-fault:x1"
    spec = RunSpec(r.scenario, seed, kills=0, rounds=3, extra_faults=faults, upgrade_to=v1.upgrade_to, deploy=deploy)
    doc = to_json(run_spec(spec, base / "upgrade", echo=lambda m: None, pool=pool))
    verdict, got = verdict_of(doc), answer.get("answer")
    check = "agrees" if got in CHECK_AGREES.get(verdict, ()) else f"disagrees ({got})" if got else "no answer"
    evidence = [f"upgrade-check: {got or answer.get('error')} (exit {answer.get('exit_code')})"]
    evidence += [f"{k['point']} at batch {k['batch']}" for k in doc["kills_fired"]]
    if doc["error"] and verdict != UNREADABLE:
        evidence.append(str(doc["error"]).splitlines()[0])
    if fixtures is not None and (base / "check" / "probe.json").exists():
        save_fixture(fixtures / r.key.split(":", 1)[1], base, r, verdict)
    echo(f"certify {r.key}: {verdict}; the guide: {rule.category}; upgrade-check {got} ({check})")
    return {
        "key": r.key,
        "kind": "upgrade",
        "name": rule.change,
        "documented": documented,
        "quote": rule.says,
        "where": GUIDE,
        "measured": _measured(doc),
        "status": upgrade_status(category, verdict),
        "check": check,
        "evidence": "; ".join(evidence),
        "error": str(doc["error"]).splitlines()[0] if verdict == "unknown" else None,
        "kills": len(doc["kills_fired"]),
        "steps_tried": [],
        "duration_s": time.monotonic() - t0,
        "v1_verdict": alone.verdict,
    }


def save_fixture(dest: Path, base: Path, r: UpgradeRow, verdict: str) -> None:
    """The files ``upgrade-check``'s decision reads (offset log head, commit log head, state metadata and
    schemas), its probe, and the measured verdict: a unit test re-makes the answer from them without Spark."""
    src = base / "v1" / "checkpoint"
    shutil.rmtree(dest, ignore_errors=True)
    newest = max(int(p.name) for p in (src / "offsets").iterdir() if p.name.isdigit())
    committed = [int(p.name) for p in (src / "commits").iterdir() if p.name.isdigit()]
    keep = [src / "metadata", src / "offsets" / str(newest)]
    keep += [src / "commits" / str(max(committed))] if committed else []
    keep += sorted((src / "state").glob("*/_metadata/metadata")) + sorted((src / "state").glob("*/**/_metadata/schema"))
    for path in keep:
        target = dest / "checkpoint" / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    shutil.copy2(base / "check" / "probe.json", dest / "probe.json")
    (dest / "measured.json").write_text(json.dumps({"row": r.key, "rule": r.rule, "verdict": verdict}, indent=2) + "\n")


def run_upgrades(
    only: Sequence[str] | None, work: Path, *, seed: int, echo: Callable[[str], None], fixtures: Path | None = None
) -> list[dict[str, Any]]:
    """Measure every upgrade row (or those in ``only``) on one driver pool."""
    from harness.engine.pool import DriverPool
    from harness.spark.session import DEFAULT_MASTER

    rows = [r for r in UPGRADE_ROWS if only is None or r.key in only]
    pool = DriverPool(work / "drivers", DEFAULT_MASTER, {}, standby=True)
    try:
        with contextlib.ExitStack() as stack:
            if any(_needs_kafka(r) for r in rows):  # one broker for all: upgrade-check reads version 1's topic
                from scenarios.kafka.resource import shared_broker

                stack.enter_context(shared_broker(work / "kafka"))
            return [measure_upgrade(r, work, seed, pool, echo, fixtures) for r in rows]
    finally:
        pool.close()


def _needs_kafka(r: UpgradeRow) -> bool:
    from scenarios import get_scenario
    from scenarios.kafka.resource import kafka_resource
    from scenarios.kafka.source import KafkaTopic

    v1 = get_scenario(r.scenario)
    versions = (v1, get_scenario(v1.upgrade_to)) if v1.upgrade_to else (v1,)
    return any(isinstance(v.source, KafkaTopic) or v.resource is kafka_resource for v in versions)
