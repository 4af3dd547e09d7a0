"""State store files of a checkpoint: ``state/<operator>/<partition>[/<store>]/``.

Layout (measured on PySpark 4.3):

- ``state/<op>/_metadata/metadata``: ``v1`` then ``{"operatorInfo": {"operatorId", "operatorName"},
  "stateStoreInfo": [{"storeName", "numColsPrefixKey", "numPartitions"}]}``
  (``_metadata/v2/<batch>`` for transformWithState operators).
- ``state/<op>/<partition>/``: the ``default`` store's files; other stores (joins) live in
  ``<partition>/<storeName>/``. ``_metadata/schema`` and RocksDB's ``SSTs/`` sit beside them.
- HDFS-backed provider: ``<version>.delta`` every batch, ``<version>.snapshot`` from maintenance.
  RocksDB provider: ``<version>.zip`` (full) and ``<version>.changelog`` (changelog checkpointing);
  with ``checkpointFormatVersion=2``: ``<version>_<uuid>.zip|.changelog``.
- The state version written by batch ``N`` is ``N + 1``; version 0 is the empty state.

Contents are binary (LZ4-compressed UnsafeRow records, RocksDB archives): this module
reads names only. See :mod:`harness.inspector.spark_view` for contents through Spark.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.inspector.checkpoint import CheckpointError

STATE_FILE_NAME = re.compile(r"^(\d+)(?:_([0-9A-Za-z-]+))?\.(delta|snapshot|zip|changelog)$")
#: File kinds that hold a full copy of the state at their version.
FULL_KINDS = frozenset({"snapshot", "zip"})
_SKIP_DIRS = frozenset({"_metadata", "SSTs"})


@dataclass(frozen=True)
class StateFile:
    """One versioned state file."""

    version: int
    kind: str  # delta | snapshot | zip | changelog
    unique_id: str | None
    path: Path


@dataclass(frozen=True)
class StateStore:
    """The files of one store of one partition of one operator."""

    operator_id: int
    partition_id: int
    store_name: str
    directory: Path
    files: tuple[StateFile, ...]

    @cached_property
    def versions(self) -> list[int]:
        return sorted(self.version_set)

    @cached_property
    def version_set(self) -> frozenset[int]:
        return frozenset(f.version for f in self.files)

    def loadable(self, version: int) -> str:
        """``""`` if ``version`` can be rebuilt from these files (a full copy at some
        ``s <= version``, or the empty version 0, plus every incremental file
        ``s+1..version``), else why not. Checkpoint-format-v2 stores (unique ids)
        are judged by :func:`harness.inspector.checks_storage` instead."""
        if version <= 0:
            return ""
        by_version: dict[int, set[str]] = {}
        for f in self.files:
            by_version.setdefault(f.version, set()).add(f.kind)
        bases = [v for v, kinds in by_version.items() if v <= version and kinds & FULL_KINDS] + [0]
        base = max(bases)
        missing = [v for v in range(base + 1, version + 1) if v not in by_version]
        if not missing:
            return ""
        have = f"the newest full copy at or below it is version {base}" if base else "there is no snapshot"
        if len(missing) == 1:
            gap = f"version {missing[0]} is missing"
        else:
            shown = ", ".join(map(str, missing[:5])) + (", ..." if len(missing) > 5 else "")
            gap = f"versions {shown} are missing"
        return f"version {version} cannot be rebuilt: {have} and {gap}"


@dataclass(frozen=True)
class StateOperator:
    """One stateful operator's directory ``state/<op>/``."""

    operator_id: int
    directory: Path
    name: str | None = None
    num_partitions: int | None = None
    metadata_path: Path | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    stores: tuple[StateStore, ...] = ()

    @property
    def partition_ids(self) -> list[int]:
        return sorted({s.partition_id for s in self.stores})

    def max_version(self) -> int | None:
        versions = [v for s in self.stores for v in s.versions]
        return max(versions) if versions else None

    def stores_with_version(self, version: int) -> int:
        return sum(1 for s in self.stores if version in s.version_set)


def _files(directory: Path, op: int, part: int, store: str) -> StateStore:
    found = []
    for entry in os.scandir(directory):
        m = STATE_FILE_NAME.match(entry.name)
        if m and entry.is_file():
            found.append(StateFile(int(m.group(1)), m.group(3), m.group(2), Path(entry.path)))
    found.sort(key=lambda f: (f.version, f.kind))
    return StateStore(op, part, store, directory, tuple(found))


def _operator_metadata(op_dir: Path) -> tuple[Path | None, dict[str, Any], CheckpointError | None]:
    meta_dir = op_dir / "_metadata"
    candidates = [meta_dir / "metadata"]
    v2 = meta_dir / "v2"
    if v2.is_dir():
        ids = sorted(int(n) for n in os.listdir(v2) if n.isascii() and n.isdigit())
        candidates = [v2 / str(ids[-1])] if ids else candidates
    path = candidates[0]
    if not path.is_file():
        return None, {}, None
    try:
        lines = [ln for ln in path.read_text(encoding="utf-8").split("\n") if ln.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        return path, {}, CheckpointError(path, f"operator metadata unreadable ({exc})")
    if len(lines) < 2 or not lines[0].startswith("v"):
        return path, {}, CheckpointError(path, "operator metadata should be a version line then a JSON object")
    try:
        meta = json.loads(lines[1])
    except json.JSONDecodeError as exc:
        return path, {}, CheckpointError(path, f"operator metadata is not valid JSON ({exc.msg})")
    return path, meta if isinstance(meta, dict) else {}, None


def read_state(checkpoint: str | os.PathLike[str]) -> tuple[list[StateOperator], list[CheckpointError]]:
    """All operators under ``<checkpoint>/state`` (``[]`` for a stateless query), and
    problems with their metadata files (never raised: the caller reports them)."""
    root = Path(checkpoint) / "state"
    if not root.is_dir():
        return [], []
    operators: list[StateOperator] = []
    errors: list[CheckpointError] = []
    for op_name in sorted(os.listdir(root), key=lambda n: (len(n), n)):
        op_dir = root / op_name
        if not (op_name.isascii() and op_name.isdigit() and op_dir.is_dir()):
            continue
        op = int(op_name)
        meta_path, meta, err = _operator_metadata(op_dir)
        if err is not None:
            errors.append(err)
        info = meta.get("operatorInfo") or {}
        store_info = meta.get("stateStoreInfo") or []
        parts = {int(s["numPartitions"]) for s in store_info if isinstance(s, dict) and "numPartitions" in s}
        stores: list[StateStore] = []
        for part_name in sorted(os.listdir(op_dir), key=lambda n: (len(n), n)):
            part_dir = op_dir / part_name
            if not (part_name.isascii() and part_name.isdigit() and part_dir.is_dir()):
                continue
            part = int(part_name)
            stores.append(_files(part_dir, op, part, "default"))
            for sub in sorted(os.scandir(part_dir), key=lambda e: e.name):
                if sub.is_dir() and sub.name not in _SKIP_DIRS:
                    stores.append(_files(Path(sub.path), op, part, sub.name))
        # A partition whose files all live in named stores has an empty "default": drop it.
        named = {s.partition_id for s in stores if s.store_name != "default" and s.files}
        stores = [s for s in stores if s.files or (s.store_name == "default" and s.partition_id not in named)]
        operators.append(
            StateOperator(
                operator_id=op,
                directory=op_dir,
                name=info.get("operatorName"),
                num_partitions=parts.pop() if len(parts) == 1 else None,
                metadata_path=meta_path,
                metadata=meta,
                stores=tuple(stores),
            )
        )
    return operators, errors
