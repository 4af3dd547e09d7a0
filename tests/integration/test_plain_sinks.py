"""A user's ``foreachBatch`` function and ``foreach`` writer, not wrapped by hand, get the sink's crash points
(examples/pipelines/plain_sinks.py, written as a team writes them from Spark's docs): killed at
``sink.commit.after`` and after a step of the function, and inside the writer's ``process``; the broken twin
is caught with duplicates, the correct ones hold. The scenarios are given as ``module:ATTR``: their run
directories (``harness-examples.pipelines.plain_sinks-APPEND-...``) must hold no ``:``, or Spark's reader
fails on the path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.clirun import harness

pytestmark = pytest.mark.spark
REF = "examples.pipelines.plain_sinks"


def _report(path: Path) -> dict[str, object]:
    return dict(json.loads(path.read_text()))


def test_an_unwrapped_foreach_batch_is_killed_after_its_commit_and_the_append_duplicates(tmp_path: Path) -> None:
    rc, out, err = harness("run", f"{REF}:APPEND", "--seed", "1", "--kill", "sink.commit.after:1",
                           "--json", str(tmp_path / "r.json"))  # fmt: skip
    assert rc == 1, (out, err[-2000:])
    report = _report(tmp_path / "r.json")
    assert report["verdict"] == "violated" and set(report["anomaly_counts"]) == {"duplicate"}, report  # type: ignore[arg-type]
    assert "kill at sink.commit.after of batch 1" in out
    assert {a["batch_id"] for a in report["anomalies"]} == {1}  # type: ignore[union-attr, index]


@pytest.mark.heavy  # CI time (~30 s): the commit kill above is the default suite's unwrapped-sink case
def test_an_unwrapped_foreach_batch_is_killed_after_a_step_of_its_own_code(tmp_path: Path) -> None:
    rc, out, err = harness("run", f"{REF}:BATCH_FILES", "--seed", "1", "--kill", "sink.step:1:2")
    assert rc == 0, (out, err[-2000:])
    assert "kill after step 2 of batch 1: plain_sinks.py:" in out and "write_batch" in out, out


@pytest.mark.heavy  # CI time (~30 s): the commit kill above is the default suite's unwrapped-sink case
def test_an_unwrapped_foreach_writer_is_killed_mid_task_and_inside_process(tmp_path: Path) -> None:
    rc, out, err = harness("run", f"{REF}:ROW_FILES", "--seed", "1", "--kill", "sink.write.mid:1:0:3",
                           "--kill", "sink.step:3:1:foreach_process")  # fmt: skip
    assert rc == 0, (out, err[-2000:])
    assert "kill at sink.write.mid of batch 1, partition 0, after rows 3" in out, out
    assert "kill after step 1 of batch 3 in foreach_process: plain_sinks.py:" in out, out
