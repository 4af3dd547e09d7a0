"""The example table (``tests/example_table.py``) against the Spark-backed checks, run the way a user runs them
(``python -m harness check-source`` / ``check-sink``, exit codes and ``--json``): every pinned cell, the
Spark-free ones included, must hold with ``end-to-end`` / ``latest-offset-behind-checkpoint`` (sources) and
``crash-points`` / ``crash-anywhere`` / ``declared-guarantee`` (sinks) measured under real kills.

The default suite runs a representative row: the per-call counter that counts from zero in each new reader
(caught behind the checkpoint). Every other row is in the heavy tier (``bin/test-heavy``), among them its correct
twin and the clock-driven source whose ``initialOffset()`` is the current tick: about 40-70 s per source and a
few minutes per sink.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.example_table import (
    PURE_SOURCE_CHECKS,
    SOURCES,
    SPARK_SOURCE_CHECKS,
    SourceRow,
    mismatches,
)
from tests.example_table_sinks import GUARANTEE, PROTOCOL_SINK_CHECKS, SINKS, SPARK_SINK_CHECKS, SinkRow
from tests.integration.clirun import harness_json, leftover_processes


def _param(row: Any, heavy: bool) -> Any:
    return pytest.param(row, id=row.name, marks=[pytest.mark.heavy] if heavy else [])


def _statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["status"] for c in doc.get("checks", [])}


@pytest.mark.parametrize("row", [_param(r, r.heavy) for r in SOURCES])
def test_source_row_holds_with_spark(row: SourceRow, tmp_path: Path) -> None:
    args = ["check-source", row.source]
    if row.context:
        args += ["--context", row.context]
    options = row.options()
    if options:
        args += [a for k, v in options.items() for a in ("--option", f"{k}={v}")]
    rc, doc, log = harness_json(tmp_path / "report.json", *args)
    actual = _statuses(doc)
    bad = mismatches(row.expect, actual, (*PURE_SOURCE_CHECKS, *SPARK_SOURCE_CHECKS))
    assert not bad, f"{row.name}: " + "; ".join(bad) + "\n" + log
    if row.expect["end-to-end"] is not None:
        assert rc == (1 if any(e == "fail" for e in row.expect.values()) else 0), log
    assert leftover_processes() == []


@pytest.mark.parametrize("row", [_param(r, True) for r in SINKS])
def test_sink_row_holds_with_spark(row: SinkRow, tmp_path: Path) -> None:
    rc, doc, log = harness_json(
        tmp_path / "report.json", "check-sink", row.target, "--read-back", row.read_back, *row.cli_args
    )
    actual = _statuses(doc)
    bad = mismatches(row.expect, actual, (*PROTOCOL_SINK_CHECKS, *SPARK_SINK_CHECKS, GUARANTEE))
    assert not bad, f"{row.name}: " + "; ".join(bad) + "\n" + log
    assert rc in (0, 1), log
    assert leftover_processes() == []


@pytest.mark.heavy  # CI time: test_user_raised.py's raising sources are the default suite's cases
def test_a_source_that_raises_inside_spark_is_named_by_its_own_frame(tmp_path: Path) -> None:
    """Issue 25 point 4: the query fails inside Spark with the source's ValueError; ``end-to-end`` is a failure
    of the source that names the exception and the source's own frame, not Spark's wrapper or "no verdict"."""
    pure = ",".join(PURE_SOURCE_CHECKS)
    rc, doc, log = harness_json(
        tmp_path / "report.json",
        "check-source",
        "examples/connectors/poison_record.py:PoisonRecordSource",
        "--skip",
        pure,
    )
    e2e = next(c for c in doc["checks"] if c["id"] == "end-to-end")
    assert rc == 1 and e2e["status"] == "fail", log
    assert "ValueError: cannot decode record 40: unexpected byte 0x9f" in e2e["summary"], e2e
    assert "poison_record.py:32 in decode" in e2e["summary"] and "in read)" in e2e["summary"], e2e
    assert "python_streaming_source_runner" not in e2e["summary"]
    assert leftover_processes() == []
