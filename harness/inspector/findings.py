"""Findings of the checkpoint inspector and the registry of invariant ids.

Every finding carries a stable ``id`` from :data:`INVARIANTS`, the file it is
about, and a message that says what it means for exactly-once. ``violation``
findings make ``python -m harness inspect`` exit 1; ``note`` findings are
information (the newest batch awaiting its re-run, purged history, leftovers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["violation", "note"]

#: id -> (severity, what the invariant says). Ids are stable: tools match on them.
INVARIANTS: dict[str, tuple[Severity, str]] = {
    "metadata-missing": ("violation", "the metadata file (query id) exists whenever offsets/ or commits/ exist"),
    "log-corrupt": ("violation", "every log file parses the way Spark reads it (not empty, truncated or garbage)"),
    "log-version": ("violation", "every log file starts with a version line Spark 4.2 accepts"),
    "offsets-gap": ("violation", "batch ids in offsets/ are contiguous"),
    "commits-gap": ("violation", "every planned batch below the newest commit has its commit (none missing)"),
    "commit-without-offsets": ("violation", "every commits/N has its offsets/N"),
    "uncommitted-not-last": ("violation", "only the newest planned batch may lack a commit"),
    "source-count-changed": ("violation", "every offsets/N records the same number of sources"),
    "offset-regression": ("violation", "no source's offset moves backwards from one batch to the next"),
    "kafka-partition-dropped": ("violation", "a Kafka topic-partition in offsets/N is still in offsets/N+1"),
    "watermark-regression": ("violation", "the event-time watermark never moves backwards"),
    "conf-changed": ("violation", "confs Spark pins in offsets/N (e.g. shuffle partitions) never change"),
    "state-version-missing": ("violation", "every state store can rebuild the version of the newest commit"),
    "state-ahead": ("violation", "no state file is newer than the newest planned batch"),
    "state-partitions-mismatch": ("violation", "each stateful operator has one directory per shuffle partition"),
    "state-unique-id-missing": ("violation", "state files named by the newest commit (checkpoint v2) exist"),
    "crc-mismatch": ("violation", "every file matches its checksum sidecar"),
    "source-log-missing": ("violation", "the file-source log entry the newest offsets point at exists"),
    "sink-file-missing": ("violation", "every file the sink log lists exists"),
    "sink-file-size": ("violation", "every file the sink log lists has the size the log records"),
    "sink-orphan-file": ("violation", "every data file in the sink directory is listed by the sink log"),
    "sink-path-foreign": ("violation", "the sink log lists files inside the sink directory (not a copied/moved one)"),
    "sink-batch-missing": ("violation", "every committed batch is recorded in the sink log"),
    "sink-ahead": ("violation", "the sink log records no batch the checkpoint never planned"),
    "delta-log-corrupt": ("violation", "the Delta table's _delta_log parses (every commit JSON, no version missing)"),
    "delta-batch-missing": ("violation", "every committed batch has a Delta commit carrying txn(app, batch id)"),
    "delta-txn-repeated": ("violation", "no txn(app, batch id) is in two Delta commits (a batch written twice)"),
    "delta-txn-ahead": ("violation", "the Delta table's newest txn for the app is not beyond the newest planned batch"),
    "last-batch-uncommitted": ("note", "the newest planned batch has no commit yet: Spark re-runs it on restart"),
    "logs-purged": ("note", "Spark purged batches older than minBatchesToRetain"),
    "sink-uncommitted-batch": ("note", "the sink recorded a batch the checkpoint has not committed yet"),
    "temp-file": ("note", "a leftover temp file of an interrupted atomic write"),
    "crc-orphan": ("note", "a checksum sidecar whose file is gone"),
    "sink-not-file-sink": ("note", "the --sink-dir has no _spark_metadata log: sink checks skipped"),
    "delta-txn-uncommitted-batch": ("note", "the newest planned batch is in the Delta table but not committed yet"),
    "delta-no-txn": ("note", "the Delta table holds no txn for the app: per-batch Delta checks skipped"),
    "delta-batches-unchecked": ("note", "committed batches before the app's first txn in the Delta log: not checked"),
    "delta-app-unknown": ("note", "no query id (metadata) and no --txn-app-id: the Delta txns cannot be matched"),
}


@dataclass(frozen=True)
class Finding:
    """One result of an invariant check."""

    id: str
    #: The file or directory the finding is about (absolute path).
    path: str
    message: str
    batch_id: int | None = None

    def __post_init__(self) -> None:
        if self.id not in INVARIANTS:
            raise ValueError(f"unknown invariant id {self.id!r}; add it to INVARIANTS")

    @property
    def severity(self) -> Severity:
        return INVARIANTS[self.id][0]

    @property
    def is_violation(self) -> bool:
        return self.severity == "violation"

    def line(self) -> str:
        """``[id] path: message`` on one line."""
        return f"[{self.id}] {self.path}: {self.message}"
