"""Run specifications: everything that determines a run, as frozen data with a
JSON round trip (the seed plus the spec reproduce the run)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fault_injectors.plan import (
    BOUNDARY_POINTS,
    STEP_POINT,
    TIMED_POINT,
    FaultPlanError,
    FaultRule,
)
from fault_injectors.registry import action
from harness.engine.commandline import harness_command
from harness.engine.trigger import parse_trigger
from harness.spark.connect import inner_master
from harness.spark.session import DEFAULT_MASTER
from harness.spark.standalone import is_standalone, parse_standalone

_PROVIDERS = "org.apache.spark.sql.execution.streaming.state."
#: State-store axes of a stateful query (issue 13): the provider, as a run names it, and the confs it sets.
STATE_STORES: dict[str, dict[str, str]] = {
    "hdfs": {"spark.sql.streaming.stateStore.providerClass": _PROVIDERS + "HDFSBackedStateStoreProvider"},
    "rocksdb": {
        "spark.sql.streaming.stateStore.providerClass": _PROVIDERS + "RocksDBStateStoreProvider",
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "false",
    },
    "rocksdb-changelog": {
        "spark.sql.streaming.stateStore.providerClass": _PROVIDERS + "RocksDBStateStoreProvider",
        "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    },
}
#: Checkpoint format versions of the state stores (2: state files named by unique ids, listed in ``commits/N``),
#: per store: Spark supports version 2 for RocksDB only (measured: the HDFS-backed store fails the query with
#: STATE_STORE_CHECKPOINT_IDS_NOT_SUPPORTED).
CHECKPOINT_FORMATS: dict[str, tuple[int, ...]] = {"hdfs": (1,), "rocksdb": (1, 2), "rocksdb-changelog": (1, 2)}


@dataclass(frozen=True)
class RunSpec:
    """One harness run: a scenario, a seed and the faults to inject.

    ``kills`` seeded kills are drawn from the scenario's crash points;
    ``extra_faults`` are explicit rules (``--kill``, ``--fault-plan``) added to
    them; ``fault_plan`` remembers the plan file they came from, for replay.
    ``rounds`` add-data/run rounds are played (default: ``max(2, kills)``).
    """

    scenario: str
    seed: int
    kills: int = 3
    rounds: int | None = None
    extra_faults: tuple[FaultRule, ...] = ()
    fault_plan: str | None = None
    nemesis: tuple[str, ...] = ()
    #: Explicit data per round (offset units per partition); overrides the seeded amounts and ``rounds``.
    rows: tuple[tuple[int, ...], ...] | None = None
    master: str = DEFAULT_MASTER
    confs: dict[str, str] = field(default_factory=dict)
    command_timeout_s: float = 300.0
    #: Record the steps of every call of the wrapped sink functions (``faults/census.jsonl``).
    census: bool = False
    #: Rows of input over the whole run, spread evenly over its rounds and partitions (10^5..10^6 for volume
    #: runs); replaces the scenario's seeded ``rows_per_round``. ``None``: the scenario's amounts.
    volume: int | None = None
    #: Rows one batch of the replayable source may take (its admission limit): fewer rows a batch means more
    #: batches for the same data (a 60-batch run past the file sink's log compactions). ``None``: the
    #: scenario's ``max_rows_per_batch``, or with ``volume`` about two batches per round.
    batch_rows: int | None = None
    #: State store of a stateful query (a key of :data:`STATE_STORES`); ``None``: Spark's default (HDFS-backed).
    state_store: str | None = None
    #: The state stores' checkpoint format version (:data:`CHECKPOINT_FORMATS`); ``None``: Spark's default (1).
    checkpoint_format: int | None = None
    #: ``spark.sql.shuffle.partitions`` of the query (the number of state store partitions); ``None``: 2.
    shuffle_partitions: int | None = None
    #: An upgrade run: the scenario (name or ``module:ATTRIBUTE``) deployed over the same checkpoint and sink at
    #: the ``deploy`` moment (:mod:`harness.engine.deploy`); ``None``: one version throughout.
    upgrade_to: str | None = None
    #: When ``upgrade_to`` is deployed: ``after-round:K`` (a graceful stop after round K caught up) or
    #: ``after-fault:ID`` (the driver killed by fault rule ID restarts as the new version). ``None``: after round 1.
    deploy: str | None = None
    #: A Spark upgrade run: the Python of an older PySpark's virtual environment (``bin/test-spark-upgrade``
    #: builds them) that runs the first ``old_rounds`` rounds, fault-free (:mod:`harness.engine.old_spark`); the
    #: project's PySpark resumes that checkpoint and sink for the rest, with the faults. ``None``: one Spark.
    old_pyspark: str | None = None
    #: Rounds the older PySpark runs (``old_pyspark``); at least one round is left for the project's.
    old_rounds: int = 1
    #: How the query is triggered (:mod:`harness.engine.trigger`: ``available-now``, ``once``,
    #: ``processing-time:<interval>``, ``continuous:<interval>``, ``real-time:<interval>``); ``None``: the
    #: scenario's default (today's rounds: ``availableNow``, a killed round restarted until it catches up).
    trigger: str | None = None

    def __post_init__(self) -> None:
        if self.kills < 0:
            raise ValueError("kills must be >= 0")
        if self.rounds is not None and self.rounds < 1:
            raise ValueError("rounds must be >= 1")
        if self.command_timeout_s <= 0:
            raise ValueError("command_timeout_s must be > 0")
        if self.volume is not None and self.volume < 1:
            raise ValueError(f"volume must be >= 1 row (got {self.volume})")
        if self.batch_rows is not None and self.batch_rows < 1:
            raise ValueError(f"batch_rows must be >= 1 row (got {self.batch_rows})")
        if self.state_store is not None and self.state_store not in STATE_STORES:
            raise ValueError(f"state store {self.state_store!r} is not one of {', '.join(STATE_STORES)}")
        if self.checkpoint_format is not None:
            allowed = CHECKPOINT_FORMATS[self.state_store or "hdfs"]
            if self.checkpoint_format not in allowed:
                raise ValueError(
                    f"checkpoint format {self.checkpoint_format} is not supported by the "
                    f"{self.state_store or 'hdfs'} state store (it supports {', '.join(map(str, allowed))})"
                    + ("" if self.state_store else "; name the store with --state-store rocksdb or rocksdb-changelog")
                )
        if self.shuffle_partitions is not None and self.shuffle_partitions < 1:
            raise ValueError(f"shuffle_partitions must be >= 1 (got {self.shuffle_partitions})")
        if self.deploy is not None:
            if self.upgrade_to is None:
                raise ValueError(f"deploy {self.deploy!r} given without upgrade_to (the version to deploy)")
            parse_deploy(self.deploy)
        if self.old_pyspark is not None:
            if self.old_rounds < 1 or self.old_rounds >= self.effective_rounds:
                raise ValueError(
                    f"old_rounds {self.old_rounds}: the older PySpark runs rounds 1..K with K < rounds "
                    f"({self.effective_rounds}), so the project's PySpark has a round of its own to resume with"
                )
            if self.upgrade_to is not None:
                raise ValueError("a Spark upgrade run (old_pyspark) deploys no pipeline upgrade too: one change a run")
        if self.trigger is not None:
            parse_trigger(self.trigger)  # ValueError in one line
            if self.upgrade_to is not None or self.old_pyspark is not None:
                raise ValueError(
                    f"an upgrade run takes the default trigger (got --trigger {self.trigger}): one change a run"
                )
        if self.volume is not None and self.rows is not None:
            raise ValueError("give either rows (per round and partition) or volume (rows in all), not both")
        inner = inner_master(self.master)
        local = inner == "local" or inner.startswith("local[")
        if is_standalone(inner):
            parse_standalone(inner)  # ValueError saying what to give
        for rule in self.extra_faults:
            needs = action(rule.action).needs
            if needs == "standalone" and not is_standalone(inner):
                raise ValueError(
                    f"fault rule {rule.id!r}: action {rule.action} needs the standalone cluster the harness starts; "
                    f"master {self.master!r} is not one (use --cluster standalone:2)"
                )
            if needs == "executors" and local:
                raise ValueError(
                    f"fault rule {rule.id!r}: action {rule.action} needs executors separate from the driver; "
                    f"master {self.master!r} runs tasks inside the driver JVM (use --master 'local-cluster[2,1,1024]')"
                )

    @property
    def deterministic(self) -> bool:
        """Whether a replay of this spec must reproduce its run: false when a timed kill (``batch.time``) or a
        state-maintenance kill (``state.snapshot``, ``state.purge``) is planned: they land where the clock, or
        Spark's maintenance task, says, a few ms elsewhere on every run."""
        return not any(r.timed or r.point in BOUNDARY_POINTS for r in self.extra_faults)

    @property
    def effective_rounds(self) -> int:
        if self.rows is not None:
            return len(self.rows)
        return self.rounds if self.rounds is not None else max(2, self.kills)

    def state_confs(self) -> dict[str, str]:
        """The runtime SQL confs of the state-store axes this run sets (empty: Spark's and the session's)."""
        confs = dict(STATE_STORES[self.state_store]) if self.state_store else {}
        if self.checkpoint_format is not None:
            confs["spark.sql.streaming.stateStore.checkpointFormatVersion"] = str(self.checkpoint_format)
        if self.shuffle_partitions is not None:
            confs["spark.sql.shuffle.partitions"] = str(self.shuffle_partitions)
        return confs

    def axes(self) -> str:
        """The state-store axes as a short label (``hdfs/v1/2p``), Spark's defaults named."""
        store = self.state_store or "hdfs"
        return f"{store}/v{self.checkpoint_format or 1}/{self.shuffle_partitions or 2}p"

    def effective_batch_rows(self, scenario_max: int) -> int:
        """Rows a batch may take in this run: ``batch_rows``; else with ``volume``, enough for about two batches
        per round (at least ``scenario_max``); else the scenario's ``scenario_max``."""
        if self.batch_rows is not None:
            return self.batch_rows
        if self.volume is not None:
            return max(scenario_max, math.ceil(self.volume / (2 * self.effective_rounds)))
        return scenario_max

    def volume_offsets(self, partitions: int, rows_per_offset: int) -> int | None:
        """With ``volume``: offset units each partition gets per round (the same in every round, at least 1),
        so the run adds at least ``volume`` rows; ``None`` without ``volume``."""
        if self.volume is None:
            return None
        return max(1, math.ceil(self.volume / (self.effective_rounds * partitions * rows_per_offset)))

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunSpec:
        raw = dict(raw)
        raw["extra_faults"] = tuple(FaultRule.from_dict(r) for r in raw.get("extra_faults", ()))
        raw["nemesis"] = tuple(raw.get("nemesis", ()))
        if raw.get("rows") is not None:
            raw["rows"] = tuple(tuple(int(n) for n in r) for r in raw["rows"])
        return cls(**raw)

    @classmethod
    def load(cls, path: str | Path) -> RunSpec:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json())

    def replay_command(self) -> str:
        """One shell line that reruns this spec from scratch (quoted: :mod:`harness.engine.commandline`)."""
        return harness_command(*self.replay_args())

    def _replayed_deploy(self) -> str:
        """``deploy`` as the replay command names it: ``run`` calls the ``--kill`` rules ``x1, x2, ...`` in order
        (a chaos spec's ``h1`` becomes the ``x`` of its position); a rule from the plan file keeps its id."""
        assert self.deploy is not None
        kind, _, wanted = self.deploy.partition(":")
        if kind != "after-fault":
            return self.deploy
        killed = [r for r in self.extra_faults if not (self.fault_plan and not r.id.startswith("x"))]
        position = next((i for i, r in enumerate(killed) if r.id == wanted), None)
        return self.deploy if position is None else f"after-fault:x{position + 1}"

    def replay_args(self) -> list[str]:
        """The arguments of ``harness`` that rerun this spec from scratch (``run SCENARIO --seed ...``)."""
        parts = ["run", self.scenario, "--seed", str(self.seed), "--kills", str(self.kills)]
        if self.rounds is not None or (self.rows is not None and self.upgrade_to is not None):
            parts += ["--rounds", str(self.effective_rounds)]  # a graceful deploy names a round
        if self.fault_plan:
            parts += ["--fault-plan", self.fault_plan]
        for r in self.extra_faults:
            if self.fault_plan and not r.id.startswith("x"):
                continue  # comes from the plan file
            parts += ["--kill", kill_argument(r)]
        for name in self.nemesis:
            parts += ["--nemesis", name]
        if self.volume is not None:
            parts += ["--volume", str(self.volume)]
        if self.batch_rows is not None:
            parts += ["--batch-rows", str(self.batch_rows)]
        if self.state_store is not None:
            parts += ["--state-store", self.state_store]
        if self.checkpoint_format is not None:
            parts += ["--checkpoint-format", str(self.checkpoint_format)]
        if self.shuffle_partitions is not None:
            parts += ["--shuffle-partitions", str(self.shuffle_partitions)]
        if self.upgrade_to is not None:
            parts += ["--upgrade-to", self.upgrade_to]
        if self.deploy is not None:
            parts += ["--deploy", self._replayed_deploy()]
        if self.old_pyspark is not None:
            parts += ["--old-pyspark", self.old_pyspark, "--old-rounds", str(self.old_rounds)]
        if self.trigger is not None:
            parts += ["--trigger", self.trigger]
        if self.master != DEFAULT_MASTER:
            parts += ["--master", self.master]
        if self.census:
            parts.append("--census")
        return parts


def parse_deploy(text: str) -> tuple[str, int | str]:
    """``after-round:K`` -> ``("after-round", K)``; ``after-fault:ID`` -> ``("after-fault", ID)``. ``ValueError``
    names the argument and the two forms."""
    kind, _, arg = text.partition(":")
    if kind == "after-round":
        try:
            k = int(arg)
        except ValueError:
            k = 0
        if k >= 1:
            return kind, k
    elif kind == "after-fault" and arg:
        return kind, arg
    raise ValueError(
        f"deploy {text!r}: expected after-round:K (K >= 1: a graceful stop after round K) or after-fault:ID "
        "(the driver that fault rule ID kills restarts as the new version)"
    )


def kill_argument(rule: FaultRule) -> str:
    """``rule`` as the argument of ``--kill`` (``POINT:BATCH[:PARTITION[:AFTER_ROWS]]``, or
    ``sink.step:BATCH:STEP[:WRAPPER[:PARTITION]]``, or ``batch.time:BATCH:MS``); an action other than a kill as
    a ``@ACTION`` suffix."""
    batch = "" if rule.batch is None else rule.batch
    if rule.timed:
        text = f"{rule.point}:{batch}:{rule.after_ms}"
    elif rule.point == STEP_POINT:
        text = f"{rule.point}:{batch}:{rule.step}"
        if rule.wrapper is not None or rule.partition is not None:
            text += f":{rule.wrapper or ''}"
        if rule.partition is not None:
            text += f":{rule.partition}"
    else:
        text = f"{rule.point}:{batch}"
        if rule.partition is not None or rule.after_rows is not None:
            text += f":{'' if rule.partition is None else rule.partition}"
        if rule.after_rows is not None:
            text += f":{rule.after_rows}"
    return text if rule.default_action else f"{text}@{rule.action}"


def parse_kill_argument(text: str) -> FaultRule:
    """``POINT:BATCH[:PARTITION[:AFTER_ROWS]]``, ``sink.step:BATCH:STEP[:WRAPPER[:PARTITION]]`` or
    ``batch.time:BATCH:MS``, with an optional ``@ACTION`` suffix (default: a SIGKILL of the driver's process
    groups) -> a rule (id assigned later). ``ValueError`` names the argument and what is wrong."""
    body, _, action = text.partition("@")
    parts = body.split(":")
    how: dict[str, Any] = {"action": action} if action else {}
    if parts[0] == TIMED_POINT:
        if len(parts) != 3:
            raise ValueError(f"--kill {text!r}: expected {TIMED_POINT}:BATCH:MS")
        try:
            batch, after_ms = int(parts[1]), int(parts[2])
        except ValueError:
            raise ValueError(f"--kill {text!r}: BATCH and MS must be integers") from None
        try:
            return FaultRule("x", TIMED_POINT, batch, after_ms=after_ms, **how)
        except FaultPlanError as exc:  # a ValueError with the rule's own words
            raise ValueError(f"--kill {text!r}: {exc}") from None
    if parts[0] == STEP_POINT:
        usage = f"{STEP_POINT}:BATCH:STEP[:WRAPPER[:PARTITION]]"
        if not 3 <= len(parts) <= 5:
            raise ValueError(f"--kill {text!r}: expected {usage}")
        wrapper = parts[3] if len(parts) > 3 and parts[3] else None
        try:
            batch, step = int(parts[1]), int(parts[2])
            partition = int(parts[4]) if len(parts) > 4 and parts[4] else None
        except ValueError:
            raise ValueError(f"--kill {text!r}: BATCH, STEP and PARTITION must be integers") from None
        try:
            return FaultRule("x", STEP_POINT, batch, partition, step=step, wrapper=wrapper, **how)
        except FaultPlanError as exc:  # a ValueError with the rule's own words
            raise ValueError(f"--kill {text!r}: {exc}") from None
    if len(parts) < 2 or len(parts) > 4:
        raise ValueError(f"--kill {text!r}: expected POINT:BATCH[:PARTITION[:AFTER_ROWS]]")
    try:
        nums = [int(p) if p != "" else None for p in parts[1:]]
    except ValueError:
        raise ValueError(f"--kill {text!r}: BATCH, PARTITION and AFTER_ROWS must be integers") from None
    planned, partition, after = [*nums, None, None][:3]
    if planned is None:
        raise ValueError(f"--kill {text!r}: BATCH is required")
    try:
        return FaultRule("x", parts[0], planned, partition, after, **how)
    except FaultPlanError as exc:
        raise ValueError(f"--kill {text!r}: {exc}") from None
