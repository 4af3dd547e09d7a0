"""State schema files of a checkpoint: the key and value schemas each state store was written with.

Layout (measured on PySpark 4.2.0): ``state/<op>/0/[<store>/]_metadata/schema``, written by the first batch of
a stateful operator (partition 0 only). Format (Spark's ``SchemaHelper``): ``writeUTF("v1")`` then the key and
value schema JSON as two ``writeUTF`` strings; or ``writeUTF("v2")`` then, for key and value each, an ``int``
count of chunks and that many ``writeUTF`` chunks of the JSON. ``transformWithState`` keeps versioned schemas
in ``state/<op>/_stateSchema/`` (format v3); those are listed, not parsed: Spark checks their evolution itself.

Contracts: pure (reads files only); a file this module cannot parse is a :class:`CheckpointError` naming it.
:func:`same_but_names` compares two schemas the way Spark's compatibility check does (field types in order,
nullability and names ignored) and says which names differ.
"""

from __future__ import annotations

import io
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.inspector.checkpoint import CheckpointError


@dataclass(frozen=True)
class StateSchema:
    """One store's schemas: ``key`` and ``value`` as Spark's JSON ``StructType`` (dicts); ``where`` is the
    store's path relative to ``state/`` (``0/0`` or ``0/0/left-keyToNumValues``)."""

    where: str
    operator: int
    key: dict[str, Any]
    value: dict[str, Any]


def _utf(buf: io.BytesIO, path: Path) -> str:
    head = buf.read(2)
    if len(head) < 2:
        raise CheckpointError(path, "truncated state schema file")
    (n,) = struct.unpack(">H", head)
    raw = buf.read(n)
    if len(raw) < n:
        raise CheckpointError(path, "truncated state schema file")
    return raw.decode("utf-8")


def _chunks(buf: io.BytesIO, path: Path) -> str:
    head = buf.read(4)
    if len(head) < 4:
        raise CheckpointError(path, "truncated state schema file")
    (count,) = struct.unpack(">i", head)
    return "".join(_utf(buf, path) for _ in range(count))


def read_schema_file(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(key, value)`` schemas of one ``_metadata/schema`` file (format v1 or v2)."""
    buf = io.BytesIO(path.read_bytes())
    version = _utf(buf, path)
    try:
        if version == "v1":
            key, value = json.loads(_utf(buf, path)), json.loads(_utf(buf, path))
        elif version == "v2":
            key, value = json.loads(_chunks(buf, path)), json.loads(_chunks(buf, path))
        else:
            raise CheckpointError(path, f"state schema format {version!r} is not v1 or v2")
    except ValueError as exc:
        raise CheckpointError(path, f"state schema is not JSON: {exc}") from None
    return key, value


def read_state_schemas(checkpoint: str | os.PathLike[str]) -> list[StateSchema]:
    """Every store's schemas under ``checkpoint/state``, by path; ``[]`` for a stateless query."""
    root = Path(checkpoint) / "state"
    found = []
    for path in sorted(root.glob("*/**/_metadata/schema")):
        rel = path.parent.parent.relative_to(root)
        if not rel.parts[0].isdigit():
            continue
        key, value = read_schema_file(path)
        found.append(StateSchema(str(rel), int(rel.parts[0]), key, value))
    return found


def evolving_operators(checkpoint: str | os.PathLike[str]) -> list[int]:
    """Operators that keep versioned schemas (``_stateSchema``, ``transformWithState``)."""
    root = Path(checkpoint) / "state"
    return sorted(int(p.parent.name) for p in root.glob("*/_stateSchema") if p.parent.name.isdigit())


def _shape(schema: Any) -> Any:
    """A schema with names, nullability and metadata dropped: what Spark's compatibility check compares."""
    if isinstance(schema, dict) and schema.get("type") == "struct":
        return ("struct", tuple(_shape(f["type"]) for f in schema.get("fields", [])))
    if isinstance(schema, dict) and schema.get("type") == "array":
        return ("array", _shape(schema.get("elementType")))
    if isinstance(schema, dict) and schema.get("type") == "map":
        return ("map", _shape(schema.get("keyType")), _shape(schema.get("valueType")))
    return schema


def _names(schema: Any, prefix: str = "") -> list[str]:
    if not (isinstance(schema, dict) and schema.get("type") == "struct"):
        return []
    out = []
    for f in schema.get("fields", []):
        out.append(prefix + f["name"])
        out += _names(f["type"], prefix + f["name"] + ".")
    return out


def same_but_names(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str]] | None:
    """``None`` when the two schemas differ in shape (Spark refuses that); else the ``(old, new)`` field names
    that differ, position by position (``[]``: the same schema)."""
    if _shape(old) != _shape(new):
        return None
    return [
        (a, b) for a, b in zip(_names(old), _names(new), strict=False) if a.rsplit(".", 1)[-1] != b.rsplit(".", 1)[-1]
    ]
