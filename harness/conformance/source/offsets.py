"""Offsets as Spark sees them: JSON text.

PySpark hands a Python source's offsets to the JVM as ``json.dumps(offset)``
and compares offsets as those strings (``PythonStreamingSourceOffset``), then
gives them back to the source as ``json.loads`` of the logged text. So an
offset must be a JSON object that survives the round trip unchanged, and two
equal offsets must produce the same text: ``{"a": 1, "b": 2}`` and
``{"b": 2, "a": 1}`` are equal dicts but different offsets to Spark (new data
for ever, or a batch that never ends).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

NOT_JSON = object()


def dumps(offset: Any) -> str | None:
    """``json.dumps`` as PySpark does it, or ``None`` if it cannot be serialised."""
    try:
        return json.dumps(offset)
    except (TypeError, ValueError):
        return None


def json_problems(offset: Any) -> list[str]:
    """Why ``offset`` is not a valid Spark offset (empty list: it is)."""
    if not isinstance(offset, dict):
        return [f"is a {type(offset).__name__}, not a dict (Spark requires a JSON object)"]
    problems = []
    for path, value in _walk(offset):
        if isinstance(value, dict):
            bad = [k for k in value if not isinstance(k, str)]
            if bad:
                problems.append(f"{path or '<root>'} has non-string key(s) {bad[:3]} (JSON turns them into strings)")
        elif isinstance(value, tuple):
            problems.append(f"{path} is a tuple (JSON turns it into a list)")
        elif isinstance(value, float) and not math.isfinite(value):
            problems.append(f"{path} is {value} (not valid JSON)")
        elif not isinstance(value, str | int | float | bool | list | type(None)):
            problems.append(f"{path} is a {type(value).__name__} (not a JSON type)")
    text = dumps(offset)
    if text is None:
        if not problems:
            problems.append("json.dumps refuses it")
        return problems
    if json.loads(text) != offset and not problems:
        problems.append(f"json.loads(json.dumps(o)) != o: {text} comes back as {json.loads(text)!r}")
    return problems


def _walk(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _walk(v, f"{path}[{i}]")


def numeric_leaves(value: Any, prefix: str = "") -> dict[str, float]:
    """Every numeric leaf by path (booleans excluded), e.g. ``{"0": 10, "1": 12}``: the checkpoint
    inspector's walk, so both name an offset regression the same way."""
    from harness.inspector.checks_logs import numeric_leaves as leaves

    return dict(leaves(value, prefix))


def regressions(before: Any, after: Any) -> list[str]:
    """Numeric leaves present in both offsets that decrease from ``before`` to
    ``after`` (``"0: 40 -> 0"``); the same rule the checkpoint inspector uses
    for ``offset-regression``. A leaf that disappears counts too."""
    old, new = numeric_leaves(before), numeric_leaves(after)
    back = [f"{k}: {old[k]:g} -> {v:g}" for k, v in new.items() if k in old and v < old[k]]
    gone = [f"{k}: {old[k]:g} -> (missing)" for k in old if k not in new and new]
    return back + gone


def short(offset: Any, limit: int = 120) -> str:
    """Compact one-line text of an offset for messages."""
    text = dumps(offset) or repr(offset)
    return text if len(text) <= limit else text[: limit - 3] + "..."
