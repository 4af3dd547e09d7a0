"""Row diffs of a failing verdict, in chispa's format: the oracle's rows beside the sink's rows.

A verdict's anomalies already carry every row they concern (the expected row with its expected and
observed counts, and for ``wrong-value`` the row readers see instead), so the diff is built from the
anomalies alone: the rows of the anomalous keys only, never the whole output, however large it is.

Layout: chispa's table (``chispa.assert_basic_rows_equality``) with the oracle's rows in the left
column (``df1``) and the sink's rows in the right column (``df2``), key after key. A key's rows are
padded so that its rows never pair with another key's; a row missing on one side shows as ``None``.
Colour: chispa's (red: differs, blue: equal) when asked for; plain text for logs, files and
``NO_COLOR``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.verdict.checker import Anomaly

#: Keys shown at most; the rest are counted.
MAX_KEYS = 20
#: Anomaly kinds that concern rows of the output (the others concern the checkpoint).
ROW_KINDS = ("lost", "duplicate", "wrong-value", "phantom", "replay-divergent")
PROVENANCE = ("partition", "offset", "seq")
HEADER = "rows of the keys involved (df1 = the oracle's rows, df2 = the sink's rows; chispa):"
DIFF_FILE = "row_diff.txt"


def add_color_argument(p: argparse.ArgumentParser) -> None:
    """``--no-color``: plain row diffs (also ``$NO_COLOR``, and whenever stdout is not a terminal)."""
    p.add_argument(
        "--no-color",
        action="store_true",
        help="plain text row diffs for logs (also NO_COLOR=1; colour is used only on a terminal)",
    )


def use_color(stream: IO[str], no_color: bool = False) -> bool:
    """Colour for ``stream``: a terminal, unless ``no_color`` or ``$NO_COLOR`` (any value) says otherwise."""
    return not no_color and "NO_COLOR" not in os.environ and stream.isatty()


def _key(anomaly: Mapping[str, Any]) -> tuple[Any, ...]:
    if anomaly.get("partition") is not None or anomaly.get("offset") is not None:
        return ("provenance", anomaly.get("partition"), anomaly.get("offset"), anomaly.get("seq"))
    return ("row", repr(sorted(anomaly["row"].items())))


def _ordered(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with the provenance columns first (the checker keeps a row's columns sorted by name)."""
    first = [c for c in PROVENANCE if c in row]
    return {**{c: row[c] for c in first}, **{c: v for c, v in row.items() if c not in first}}


def sides(anomalies: Iterable[Mapping[str, Any] | Anomaly]) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Per anomalous key, in the anomalies' order: (the oracle's rows, the sink's rows). Anomalies come as
    the checker's :class:`~harness.verdict.checker.Anomaly` or as their JSON form (a report's ``anomalies``).

    An anomaly with ``expected_count`` e and ``observed_count`` o adds e copies of its row to the oracle's
    side and o copies (its ``observed_row`` instead, for a ``wrong-value``) to the sink's side. Anomalies
    without rows (checkpoint findings) and ``uncommitted-visible`` (a second view of a row already counted
    as a duplicate or phantom) add nothing."""
    keys: dict[tuple[Any, ...], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for a in (dataclasses.asdict(x) if dataclasses.is_dataclass(x) else x for x in anomalies):
        if a["kind"] not in ROW_KINDS or not a.get("row"):
            continue
        oracle, sink = keys.setdefault(_key(a), ([], []))
        oracle += [_ordered(a["row"])] * int(a["expected_count"])
        if a.get("observed_row") is not None:
            sink.append(_ordered(a["observed_row"]))
        else:
            sink += [_ordered(a["row"])] * int(a["observed_count"])
    return list(keys.values())


def row_diff(
    anomalies: Sequence[Mapping[str, Any] | Anomaly], *, color: bool = False, max_keys: int = MAX_KEYS
) -> str | None:
    """chispa's side-by-side table of the first ``max_keys`` anomalous keys' rows, under :data:`HEADER` and
    with a line counting the keys left out; ``None`` when no anomaly concerns rows."""
    from chispa import DataFramesNotEqualError, assert_basic_rows_equality
    from chispa.formatting import Format, FormattingConfig
    from pyspark.sql import Row

    groups = sides(anomalies)
    if not groups:
        return None
    left: list[Any] = []
    right: list[Any] = []
    # chispa compares rows field by field and fails on rows of different fields (a sink that adds a column
    # the oracle lacks): every row gets every field, a missing one as None.
    fields = list(dict.fromkeys(k for oracle, sink in groups[:max_keys] for r in (*oracle, *sink) for k in r))

    def row(r: Mapping[str, Any]) -> Any:
        return Row(**{k: r.get(k) for k in fields})

    for oracle, sink in groups[:max_keys]:
        n = max(len(oracle), len(sink))
        left += [row(r) for r in oracle] + [None] * (n - len(oracle))
        right += [row(r) for r in sink] + [None] * (n - len(sink))
    formats = FormattingConfig() if color else FormattingConfig(*(Format(),) * 4)
    try:
        assert_basic_rows_equality(left, right, formats=formats)
        table = "(the rows are equal as shown: the difference is in values this table cannot show)"
    except DataFramesNotEqualError as exc:
        table = str(exc).strip("\n")
    lines = [HEADER, table]
    if len(groups) > max_keys:
        lines.append(f"... and {len(groups) - max_keys} more key(s) (all anomalies: the report's JSON)")
    return "\n".join(lines)
