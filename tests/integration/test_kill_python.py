"""check-sink's step kills of a foreachBatch function on a hosted JVM (``kill_python``) against whole-driver kills.

The default mode kills the driver's Python process alone, its JVM hosted apart (harness.engine.jvmhost), and the
next driver attaches to the live JVM. These tests hold it to what a whole driver's death (``--faults hard``) finds,
on subjects whose verdict would change were the JVM's memory to survive the kill.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.clirun import harness_json, leftover_processes

EX = "examples/connectors"
SKIP = "write-invisible-until-commit,idempotent-commit,keys-on-batch-id,abort-cleans-up,task-retry,crash-points"


def crash_anywhere(tmp_path: Path, sink: str, read_back: str, *extra: str) -> tuple[int, dict, dict, str]:
    """``check-sink ... --steps all`` with only ``crash-anywhere``: exit code, report, that check, output tail."""
    rc, doc, log = harness_json(
        tmp_path / "r.json", "check-sink", sink, "--read-back", read_back, "--steps", "all", "--skip", SKIP,
        "--keep", str(tmp_path / "keep"), *extra,
    )  # fmt: skip
    check = next(c for c in doc["checks"] if c["id"] == "crash-anywhere")
    return rc, doc, check, log


def one_jvm(doc: dict) -> None:
    """One JVM host served every driver of the run: each kill took a Python process only."""
    logs = Path(doc["steps"]["run_dir"]).parent / "drivers"  # the pool of the command's Spark phases
    assert [p.name for p in logs.glob("jvm-*.log")] == ["jvm-1.log"], sorted(p.name for p in logs.iterdir())
    # the census's driver, the one after it (retired between the two runs), one per kill, and the waiting spare
    assert len(list(logs.glob("driver-*.log"))) == len(doc["steps"]["steps_tried"]) + 3


def per_step(check: dict) -> list[str]:
    """Each tried step's evidence line without the fault's verb (``kill python after ...`` / ``kill after ...``)."""
    return sorted(d.split(" after ", 1)[1] for d in check["details"] if " after step " in d)


def test_python_kills_find_what_driver_kills_find_where_spark_memory_is_lost(tmp_path: Path) -> None:
    # The sink remembers its batches in a global temporary view: a crash loses it. Were the view to survive the
    # Python kill, a kill after the insert would pass and one after recording the id would lose the batch.
    code = f"{EX}/jvm_memory_dedup.py"
    rc, doc, check, log = crash_anywhere(tmp_path / "python", f"{code}:jvm_memory_sink", f"{code}:read_back")
    assert rc == 1 and check["status"] == "fail" and check["observed"] == ["duplicate"], log
    assert "kill python after step" in check["summary"], log
    one_jvm(doc)
    rc_hard, _doc, hard, log_hard = crash_anywhere(
        tmp_path / "hard", f"{code}:jvm_memory_sink", f"{code}:read_back", "--faults", "hard"
    )
    assert rc_hard == 1 and hard["observed"] == ["duplicate"], log_hard
    assert per_step(check) == per_step(hard) and len(per_step(check)) == 7, (check["details"], hard["details"])
    assert leftover_processes() == []


def test_python_kills_pass_a_correct_two_transaction_sink(tmp_path: Path) -> None:
    code = f"{EX}/two_txn_foreach_batch.py"
    rc, doc, check, log = crash_anywhere(tmp_path, f"{code}:keyed_two_txn_sink", f"{code}:read_back")
    assert rc == 0 and check["status"] == "pass" and len(doc["steps"]["steps_tried"]) == 12, log
    one_jvm(doc)
    assert leftover_processes() == []


@pytest.mark.heavy  # about 2.5 min: the same 12 boundaries killed both ways
def test_python_kills_and_driver_kills_agree_on_the_two_transaction_window(tmp_path: Path) -> None:
    code = f"{EX}/two_txn_foreach_batch.py"
    found = {}
    for mode in ("mixed", "hard"):
        rc, _doc, check, log = crash_anywhere(
            tmp_path / mode, f"{code}:two_txn_sink", f"{code}:read_back", "--faults", mode
        )
        assert rc == 1 and check["observed"] == ["duplicate"], log
        found[mode] = per_step(check)
    assert found["mixed"] == found["hard"] and sum("20 duplicate" in d for d in found["hard"]) == 3, found
