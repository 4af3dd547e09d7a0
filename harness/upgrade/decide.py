"""The pure half of ``upgrade-check``: from a checkpoint and a :class:`~harness.upgrade.probe.Probe`, the answer.

Answers, with exit codes:

- ``resumable`` (0): Spark resumed the new query, the state it wrote has the old schemas field for field, and no
  documented risk applies.
- ``refused`` (1): the new query started and failed to resume (Spark's error class and the guide's row; an error
  no row explains is said so: the source may no longer hold the batch's data), or resumed a change the guide
  forbids and the check sees: a state value's fields renamed at the same types (Spark compares types only, so
  ``max`` resumes on a ``sum``'s buffer), a state schema of another shape (the schema check off), or a store the
  old query wrote that the new one no longer does, or a file sink whose log lacks the checkpoint's committed
  batches (a moved output directory: its log would start past batch 0, and every read of it fails), or a Kafka
  source subscribed to other topics than the checkpoint's offsets are of.
- ``risk`` (2): resumable, with a documented risk the checkpoint cannot rule out: a stream-stream join (the guide:
  changes in the join condition are ill-defined), a conf the new version sets that the checkpoint overrides, or
  state key fields renamed at the same types (a renamed column, which the guide allows, or a changed key).
- ``no-answer`` (2): the new query never started (it does not analyse, or its code raised), or the new state
  schemas could not be read: nothing was checked.

Contracts: pure (files and data only); every finding names the guide's row.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.inspector import batch_ids, read_offsets
from harness.inspector.state_schema import evolving_operators, read_state_schemas, same_but_names
from harness.upgrade.probe import Probe, offset_log_v2
from harness.verdict.guide import GuideRow, row
from harness.verdict.refusals import error_class, refusal_rule

EXIT_CODES = {"resumable": 0, "refused": 1, "risk": 2, "no-answer": 2}
#: Confs the offset log records and Spark restores from it at a restart, whatever the session says -> guide row.
RESTORED_CONFS = {
    "spark.sql.shuffle.partitions": "conf-shuffle-partitions",
    "spark.sql.streaming.stateStore.providerClass": "conf-state-store-provider",
    "spark.sql.streaming.multipleWatermarkPolicy": "conf-watermark-policy",
}
#: Operator names (``state/<op>/_metadata/metadata``) -> the guide's row for a renamed key / value field.
_RENAMED = {
    "stateStoreSave": ("agg-keys", "agg-functions"),
    "dedupe": ("dedup-columns", "dedup-columns"),
    "dedupeWithinWatermark": ("dedup-columns", "dedup-columns"),
    "symmetricHashJoin": ("join-schema", "join-schema"),
}


@dataclass(frozen=True)
class Finding:
    """One reason for the answer: ``kind`` is ``refused``, ``changed`` or ``risk``."""

    kind: str
    rule: GuideRow | None
    detail: str


@dataclass
class Answer:
    answer: str
    batch: int
    findings: list[Finding] = field(default_factory=list)
    error_class: str | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.answer]

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "exit_code": self.exit_code}


def operator_names(checkpoint: str | os.PathLike[str]) -> dict[int, str]:
    """Stateful operator id -> Spark's name for it (``stateStoreSave``, ``symmetricHashJoin``, ...)."""
    names = {}
    for path in sorted((Path(checkpoint) / "state").glob("*/_metadata/metadata")):
        lines = path.read_text().splitlines()
        try:
            info = json.loads(lines[1])["operatorInfo"]
        except (IndexError, KeyError, ValueError):
            continue
        names[int(info["operatorId"])] = str(info["operatorName"])
    return names


def decide(checkpoint: str | os.PathLike[str], probe: Probe) -> Answer:
    """The answer for ``probe`` over ``checkpoint`` (see the module docstring)."""
    message = probe.message or ""
    if not probe.accepted and probe.not_started:
        first = message.splitlines()[0] if message else ""
        return Answer("no-answer", probe.batch, [Finding("no-answer", None, f"the new query did not start: {first}")])
    if not probe.accepted and message.strip().endswith("None.get") and offset_log_v2(Path(checkpoint)):
        detail = (
            "Spark cannot restart a query with source evolution (offset log v2) over a pending batch, upgrade or "
            "not (4.2.0: None.get in OfflineStateRepartitionUtils.isRepartitionBatch); the probe needs that restart"
        )
        return Answer("no-answer", probe.batch, [Finding("no-answer", row("source-named"), detail)])
    if not probe.accepted:
        rule = refusal_rule(message)
        detail = message.splitlines()[0] if message else ""
        if rule is None:
            detail += (
                " (no rule of the guide explains this error: a source replaced by another kind, or a source that"
                " no longer holds the batch's data)"
            )
        return Answer("refused", probe.batch, [Finding("refused", rule, detail)], error_class(message))
    if probe.schema_error:
        detail = f"Spark resumed it, but writing the new state schemas failed: {probe.schema_error}"
        return Answer("no-answer", probe.batch, [Finding("no-answer", None, detail)])
    findings = _risks(checkpoint, probe) + _sink_findings(checkpoint, probe) + _topic_findings(checkpoint, probe)
    if not probe.after_batch:
        findings = _schema_findings(checkpoint, probe) + findings
    elif read_state_schemas(checkpoint):
        detail = (
            "Spark's start-up checks passed, but the state schemas were not compared: the probe restarted after "
            "the newest batch, as Spark 4.2.0 cannot replay a pending batch of a query with source evolution"
        )
        findings.insert(0, Finding("risk", row("source-named"), detail))
    kinds = {f.kind for f in findings}
    return Answer(
        "refused" if "changed" in kinds else "risk" if "risk" in kinds else "resumable", probe.batch, findings
    )


def _schema_findings(checkpoint: str | os.PathLike[str], probe: Probe) -> list[Finding]:
    names, evolving = operator_names(checkpoint), set(evolving_operators(checkpoint))
    out = []
    for old in read_state_schemas(checkpoint):
        if old.operator in evolving:
            continue  # transformWithState: Spark checked the evolution of its schemas itself
        op = names.get(old.operator, "a stateful operator")
        new = probe.schemas.get(old.where)
        if new is None:
            out.append(Finding("changed", row("stateful-add-remove"), f"state/{old.where} ({op}) is no longer written"))
            continue
        for part, index in (("key", 0), ("value", 1)):
            renamed = same_but_names(getattr(old, part), new[part])
            if renamed is None:  # Spark accepted another shape: its schema check is off
                detail = f"state/{old.where} ({op}): the {part} schema changed shape and Spark resumed anyway"
                out.append(Finding("changed", row("stateful-schema"), detail))
            elif renamed:
                pairs = ", ".join(f"{a} -> {b}" for a, b in renamed)
                rule = row(_RENAMED.get(op, ("stateful-schema", "stateful-schema"))[index])
                detail = (
                    f"state/{old.where} ({op}): {part} fields renamed at the same types ({pairs}); "
                    "Spark compares types only"
                )
                # A renamed key column may be a rename the guide allows; a value buffer renamed is a new aggregate.
                out.append(Finding("risk" if part == "key" else "changed", rule, detail))
    return out


def _risks(checkpoint: str | os.PathLike[str], probe: Probe) -> list[Finding]:
    out = []
    for op, name in sorted(operator_names(checkpoint).items()):
        if name == "symmetricHashJoin":
            detail = f"operator {op} is a stream-stream join: whether its condition changed is not in the checkpoint"
            out.append(Finding("risk", row("join-condition"), detail))
    logged = read_offsets(checkpoint, batch_ids(Path(checkpoint) / "offsets")[-1]).conf
    for key, rule in RESTORED_CONFS.items():
        wanted = probe.confs.get(key)
        if wanted is not None and key in logged and logged[key] != wanted:
            detail = f"{key}={wanted} is ignored: the checkpoint restores {logged[key]}"
            out.append(Finding("risk", row(rule), detail))
    return out


def _sink_findings(checkpoint: str | os.PathLike[str], probe: Probe) -> list[Finding]:
    """A file sink resumes at the checkpoint's next batch and skips batches its own log already has
    (``FileStreamSink.addBatch``); readers list the directory through that log from batch 0
    (``MetadataLogFileIndex``). A log that lacks the committed batches (a new or another directory) therefore
    never gets them, and one that starts past batch 0 cannot be read at all."""
    if probe.sink is None:
        return []
    committed = batch_ids(Path(checkpoint) / "commits")
    if not committed:
        return []
    path, latest, last = probe.sink["path"], probe.sink.get("latest"), committed[-1]
    if latest is None:
        detail = (
            f"the new version's file sink writes to {path}, which holds no sink log (_spark_metadata), but the "
            f"checkpoint committed batches up to {last}: their output stays in the old directory, the new log would "
            f"start at batch {last + 1}, and every batch read of {path} then fails (_spark_metadata/0 missing). "
            "Keep the old path, or start the new one with a new checkpoint"
        )
    elif latest < last:
        detail = (
            f"the new version's file sink writes to {path}, whose log ends at batch {latest}, but the checkpoint "
            f"committed batches up to {last}: batches {latest + 1}..{last} will never be in it"
        )
    else:
        return []
    return [Finding("changed", row("sink-file-path"), detail)]


_KAFKA = re.compile(r"^KafkaV2\[(Subscribe|SubscribePattern|Assign)\[(.*)\]\]$")


def _kafka_topics(description: str) -> tuple[str, str] | None:
    """``(strategy, argument)`` of a Kafka source's progress description; ``None`` for another source."""
    m = _KAFKA.match(description.strip())
    return (m.group(1), m.group(2)) if m else None


def _topic_findings(checkpoint: str | os.PathLike[str], probe: Probe) -> list[Finding]:
    """The pending batch replays the offsets the log names, so a Kafka source subscribed to other topics passes
    the probe; the next batch then finds the logged topics' partitions gone (``failOnDataLoss`` fails the
    query, measured) and reads the new topics from their earliest offsets. Compared here: the topics of the new
    query's subscription (its progress description) with those of the newest logged offsets."""
    logged = read_offsets(checkpoint, batch_ids(Path(checkpoint) / "offsets")[-1]).sources
    out = []
    for i, description in enumerate(probe.sources):
        parsed = _kafka_topics(description)
        offsets = logged[i] if i < len(logged) else None
        if parsed is None or not isinstance(offsets, dict):
            continue
        strategy, arg = parsed
        old = set(offsets)
        if strategy == "Subscribe":
            new = {t.strip() for t in arg.split(",") if t.strip()}
        elif strategy == "Assign":
            new = {t.strip().rsplit("-", 1)[0] for t in arg.strip("[]").split(",") if t.strip()}
        else:
            new = {t for t in old if re.fullmatch(arg, t)}
        if new != old:
            detail = (
                f"source {i} now reads {strategy.lower()} {arg}, the checkpoint's offsets are of topic(s) "
                f"{', '.join(sorted(old))}: the next batch finds {', '.join(sorted(old - new)) or 'them'} gone "
                "(failOnDataLoss fails the query; without it their data is skipped) and reads "
                f"{', '.join(sorted(new - old)) or 'the rest'} from the earliest offsets"
            )
            out.append(Finding("changed", row("source-subscribed-topics"), detail))
    return out
