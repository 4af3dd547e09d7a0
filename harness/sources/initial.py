"""The initial offset Spark actually used, recorded when Spark asked for it.

Spark asks a Python reader for ``initialOffset()`` when a query has no committed batch yet, and plans
batch 0 as ``[initialOffset(), offsets/0)``. A source whose initial offset follows the clock (like
Kafka's ``startingOffsets=latest``) answers differently each time it is asked, so an oracle that asks
again later starts somewhere else and reports rows Spark legitimately read as phantoms. Spark's own
Kafka source keeps its initial offsets in the checkpoint (``sources/0/0``); a Python source has nowhere
to, so the harness keeps them for it:

- :func:`recording_source` is a subclass of the user's ``DataSource`` whose readers append every
  ``initialOffset()`` answer to a JSON-lines file, with whether ``commits/0`` existed at that moment.
  The subclass is built at run time, so Spark pickles it by value and its readers write in whichever
  Python process Spark runs them.
- :func:`used_initial_offset` is the answer batch 0 was planned with: the last one given while no batch
  was committed yet (a restart before the first commit asks again and plans batch 0 anew).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Name of the record in a run's directory.
RECORD_FILE = "initial_offsets.jsonl"


def recording_source(source_cls: type[Any], record: Path, checkpoint: Path) -> type[Any]:
    """A subclass of ``source_cls`` (same ``name()``) whose readers record ``initialOffset()`` in ``record``."""
    record_path, commit0 = str(record), str(Path(checkpoint) / "commits" / "0")

    def wrap(reader: Any) -> Any:
        original = reader.initialOffset

        def initialOffset() -> Any:
            offset = original()
            line = json.dumps({"offset": offset, "committed": os.path.exists(commit0)}, default=str) + "\n"
            fd = os.open(record_path, os.O_CREAT | os.O_APPEND | os.O_WRONLY, 0o644)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
            return offset

        reader.initialOffset = initialOffset  # an instance attribute wins over the class's method
        return reader

    def streamReader(self: Any, schema: Any) -> Any:
        return wrap(source_cls.streamReader(self, schema))

    def simpleStreamReader(self: Any, schema: Any) -> Any:
        return wrap(source_cls.simpleStreamReader(self, schema))

    # The user's class name, so that DataSource.name()'s default (the class name) is unchanged.
    return type(
        source_cls.__name__, (source_cls,), {"streamReader": streamReader, "simpleStreamReader": simpleStreamReader}
    )


def used_initial_offset(record: Path) -> tuple[bool, Any]:
    """``(found, offset)``: the last ``initialOffset()`` answer recorded before the first commit; ``found`` is
    False when none was recorded (the run predates the record, or Spark never asked)."""
    try:
        lines = Path(record).read_text().splitlines()
    except OSError:
        return False, None
    found, offset = False, None
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line torn by a SIGKILL
        if not entry.get("committed"):
            found, offset = True, entry.get("offset")
    return found, offset


def recorded_answers(record: Path) -> list[Any]:
    """Every recorded answer, in order (for reports: how often Spark asked, and whether it moved)."""
    try:
        lines = Path(record).read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            out.append(json.loads(line).get("offset"))
        except ValueError:
            continue
    return out


def oracle_spans(start: Any, first_end: Any, end: Any) -> list[tuple[Any, Any]]:
    """The offset ranges an oracle reads for ``[start, end)``: the one range, so that a source whose ranges
    overlap or leave gaps at batch boundaries is caught; split at ``first_end`` (``offsets/0``) only when
    ``start`` lies past it in some numeric leaf, because then Spark planned batch 0 as an inverted range (a
    clock-driven start asked again after ``offsets/0`` was computed, measured) and read ``[first_end, end)``
    after it."""
    from harness.inspector.checks_logs import numeric_leaves

    old, new = dict(numeric_leaves(start)), dict(numeric_leaves(first_end))
    inverted = any(k in new and new[k] < v for k, v in old.items())
    return [(start, first_end), (first_end, end)] if inverted and first_end != end else [(start, end)]


def used_start(record: Path, ask: Callable[[], Any]) -> Any:
    """The start of batch 0: the recorded answer (:func:`used_initial_offset`), else ``ask()`` (a fresh
    reader's ``initialOffset()``, for a run that predates the record)."""
    found, offset = used_initial_offset(record)
    return offset if found else ask()


def oracle_ranges(record: Path, checkpoint: Path, end: Any, ask: Callable[[], Any]) -> list[tuple[Any, Any]]:
    """:func:`oracle_spans` of a run whose newest committed end is ``end``: from :func:`used_start` to ``end``,
    split at ``offsets/0`` of ``checkpoint`` only where batch 0 was planned inverted."""
    from harness.inspector import read_offsets

    return oracle_spans(used_start(record, ask), read_offsets(checkpoint, 0).sources[0], end)
