"""Upgrade runs: deploying the next version of a pipeline over the same checkpoint and sink.

An upgrade run (``RunSpec.upgrade_to``) plays version 1, the spec's scenario, until its ``deploy`` moment, then
version 2 over the same checkpoint, sink and input, with faults before and after. Contracts:

- The deploy happens while no query runs: after a round's query caught up and stopped (``after-round:K``), or
  after fault rule ``ID`` killed the driver (``after-fault:ID``), before the next driver starts.
- Batches below ``first_batch`` (the newest ``commits/N`` at the deploy, plus one) were committed by version 1;
  every later batch, a replay of one version 1 planned included, runs version 2's code. The record
  (``deployed.json``) is the single source of both facts for the driver, the oracle and the report.
- A query version 2 cannot resume, failing before it commits a batch, is the verdict ``upgrade-refused``, named
  by Spark's error class and the programming guide's row (:mod:`harness.verdict.guide`), not a harness error.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fault_injectors.points import ALL as ALL_POINTS
from harness.inspector import batch_ids

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from harness.verdict.guide import GuideRow
    from scenarios.base import OracleContext, Scenario

#: The pseudo crash point a deploy is listed under among a run's fired faults (anomalies after it name it).
DEPLOY_POINT = "deploy"
#: How a run's error starts when version 2 committed no batch: the run proves nothing about the upgrade.
NOTHING_DEPLOYED = "the deployed version committed no batch"
#: Crash points after which the sink may hold batch N while ``commits/N`` is missing: a deploy there would have
#: version 2 replay a batch the sink skips (its own log says it is written), so none is made after them.
NO_DEPLOY_AFTER = frozenset(p.name for p in ALL_POINTS if p.sink_may_hold)


@dataclass(frozen=True)
class Deployed:
    """Version 2 (``scenario``) runs from batch ``first_batch`` on; ``moment`` says when it was deployed."""

    scenario: str
    previous: str
    first_batch: int
    moment: str

    def describe(self) -> str:
        return f"deploy {self.scenario} over {self.previous}'s checkpoint ({self.moment}; batch {self.first_batch} on)"

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2, sort_keys=True))


def read_deployed(path: str | os.PathLike[str]) -> Deployed | None:
    """The deploy record at ``path``; ``None`` before the deploy (or in a run that is not an upgrade)."""
    try:
        raw = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    return Deployed(**raw)


def check_ran(deployed: Deployed | None, checkpoint: str | os.PathLike[str]) -> str | None:
    """Why an upgrade run proves nothing (version 2 committed no batch), or ``None``."""
    if deployed is None or first_v2_batch(checkpoint) > deployed.first_batch:
        return None
    return (
        f"{NOTHING_DEPLOYED} (the deploy was before batch {deployed.first_batch}, and no batch was left to run): "
        "deploy earlier, or add rounds"
    )


def first_v2_batch(checkpoint: str | os.PathLike[str]) -> int:
    """The first batch the new version runs: one past the newest committed batch (0 before any commit)."""
    committed = batch_ids(Path(checkpoint) / "commits")
    return committed[-1] + 1 if committed else 0


@dataclass(frozen=True)
class Refusal:
    """Spark refused to resume the deployed version: its error class, the guide row it enforces, its message."""

    error_class: str | None
    rule: GuideRow | None
    message: str
    deployed: Deployed

    def describe(self) -> str:
        cls = f"[{self.error_class}]" if self.error_class else "an error without a class"
        rule = (
            f"; the guide: {self.rule.change} is {self.rule.category}"
            if self.rule
            else "; no row of the guide names this error"
        )
        return f"Spark refused to resume {self.deployed.scenario} with {cls}{rule}"

    def to_json(self) -> dict[str, Any]:
        return {
            "error_class": self.error_class,
            "rule": asdict(self.rule) if self.rule else None,
            "message": self.message,
            "deployed": asdict(self.deployed),
        }


def refusal(
    message: str, deployed: Deployed, checkpoint: str | os.PathLike[str], faults_after: int = 0
) -> Refusal | None:
    """A :class:`Refusal` when a query that failed with ``message`` after ``deployed`` is Spark refusing to resume
    it: version 2 never committed a batch and no planned fault fired after the deploy (``faults_after``: a kill
    of version 2's own is a fault finding, not the deploy's). Its ``rule`` is the guide's row the message
    enforces, or ``None`` when no row names it (a source that cannot read another's offsets fails with a bare
    ``NumberFormatException``). ``None`` otherwise: a loud failure of its own, reported as such."""
    from harness.verdict.refusals import error_class, refusal_rule

    if first_v2_batch(checkpoint) > deployed.first_batch:
        return None
    if faults_after:
        return None
    message = message.split(": ", 1)[1] if message.startswith("the streaming query failed loudly") else message
    return Refusal(error_class(message), refusal_rule(message), message, deployed)


def committed_before(checkpoint: str | os.PathLike[str], first_batch: int) -> dict[int, int]:
    """Per source partition, the end offset of the last batch before ``first_batch`` (``{}`` for batch 0):
    the rows below it are version 1's. ``ValueError`` when the checkpoint lacks that batch's offsets."""
    from harness.verdict.check import batch_spans

    if first_batch == 0:
        return {}
    span = None
    for source in range(4):  # the replayable source among the query's (named sources may log another first)
        span = next((s for s in batch_spans(checkpoint, source) if s.batch_id == first_batch - 1 and s.end), None)
        if span is not None:
            break
    if span is None:
        raise ValueError(f"checkpoint {checkpoint}: no offsets/{first_batch - 1}, the last batch before the deploy")
    return dict(span.end)


def snapshot_logs(checkpoint: str | os.PathLike[str], dest: Path, first_batch: int) -> None:
    """Copy the checkpoint's logs of the batches before ``first_batch`` (``offsets``, ``commits``, plus ``metadata``
    and ``sources``) to ``dest``: the checkpoint as version 1 left it, for its oracle at check time."""
    import shutil

    src = Path(checkpoint)
    for log in ("offsets", "commits"):
        (dest / log).mkdir(parents=True, exist_ok=True)
        for n in batch_ids(src / log):
            if n < first_batch and (src / log / str(n)).is_file():
                shutil.copy2(src / log / str(n), dest / log / str(n))
    if (src / "metadata").is_file():
        shutil.copy2(src / "metadata", dest / "metadata")
    if (src / "sources").is_dir():
        shutil.copytree(src / "sources", dest / "sources", dirs_exist_ok=True)


def upgrade_expected(
    old: Scenario,
    new: Scenario,
    batch_input: DataFrame,
    ctxs: tuple[OracleContext, OracleContext],
    before: dict[int, int],
) -> tuple[DataFrame, DataFrame]:
    """The expected output of an upgrade run, as one frame by column name (a column one version lacks is null),
    and version 1's part of it.

    Version 1's oracle runs over the rows of the batches it committed (``before``: :func:`committed_before`)
    with ``ctxs[0]`` (the checkpoint as it left it: :func:`snapshot_logs`). A stateless version 2 adds its
    oracle over the other rows. A stateful one carries the state across the deploy: it adds its oracle over all
    the input (``ctxs[1]``, the run's end) for the groups (``old.identity``) version 1 had not emitted, the
    append-mode contract (a group is emitted once); the state schema checks decide whether Spark accepts that.
    Version 2's oracle gets ``before`` as its context's ``before_deploy``, to say what it owes rows that ran
    before the deploy (a join owes nothing to a pair of two such rows; an aggregation whose version 2 changed
    what comes before it, a filter, owes groups holding version 1's rows as version 1 saw them).
    """
    from functools import reduce

    from pyspark.sql import functions as F

    conds = [(F.col("partition") == p) & (F.col("offset") < end) for p, end in sorted(before.items())]
    first = reduce(lambda a, b: a | b, conds) if conds else F.lit(False)
    old_rows = old.expected(batch_input.where(first), ctxs[0])
    ctx_new = dataclasses.replace(ctxs[1], before_deploy=dict(before))
    if old.stateful or new.stateful:
        new_all = new.expected(batch_input, ctx_new)
        keys = [c for c in old.identity if c in new_all.columns]
        if not keys:
            raise ValueError(
                f"upgrade {old.name} -> {new.name}: none of version 1's identity columns {list(old.identity)} is in "
                "version 2's output, so the groups version 1 emitted cannot be told apart from those version 2 owes"
            )
        new_rows = new_all.join(old_rows.select(*keys), keys, "left_anti")
    else:
        new_rows = new.expected(batch_input.where(~first), ctx_new)
    return old_rows.unionByName(new_rows, allowMissingColumns=True), old_rows
