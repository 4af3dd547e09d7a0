"""check-sink's step kills of a foreachBatch function on a hosted JVM (``kill_python``) against whole-driver kills.

The default mode kills the driver's Python process alone, its JVM hosted apart (harness.engine.jvmhost), and the
next driver attaches to the live JVM. These tests hold it to what a whole driver's death (``--faults hard``) finds,
on subjects whose verdict would change were the JVM's memory to survive the kill.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.clirun import harness_json, leftover_processes

ROOT = Path(__file__).resolve().parents[2]
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


def _line_of(path: str, text: str) -> int:
    """The line of ``path`` holding ``text`` (the subject's own source, so that an edit to it moves the mark)."""
    return next(n for n, line in enumerate((ROOT / path).read_text().splitlines(), 1) if text in line)


def test_python_kills_lose_spark_memory_as_a_driver_death_does(tmp_path: Path) -> None:
    # The sink records a batch id in a global temporary view, then inserts the rows and commits. Python kills must
    # lose the view as a driver's death does: a kill before the insert's COMMIT replays the batch in full (nothing
    # lost; were the view to survive, the replay would skip the batch and lose it), a kill after it duplicates.
    code = f"{EX}/jvm_memory_dedup.py"
    rc, doc, check, log = crash_anywhere(tmp_path, f"{code}:jvm_memory_sink", f"{code}:read_back")
    assert rc == 1 and check["status"] == "fail" and check["observed"] == ["duplicate"], log
    assert "kill python after step" in check["summary"], log
    commit = _line_of(code, 'conn.execute("COMMIT")')
    steps = per_step(check)
    assert len(steps) == 7, steps
    for step in steps:
        line = int(step.split("jvm_memory_dedup.py:", 1)[1].split(" ", 1)[0])
        verdict = step.rsplit(": ", 1)[1]
        assert verdict == ("20 duplicate" if line >= commit else "nothing lost or duplicated"), steps
    one_jvm(doc)
    assert leftover_processes() == []


def test_python_kills_pass_a_correct_two_transaction_sink(tmp_path: Path) -> None:
    code = f"{EX}/two_txn_foreach_batch.py"
    rc, doc, check, log = crash_anywhere(tmp_path, f"{code}:keyed_two_txn_sink", f"{code}:read_back")
    assert rc == 0 and check["status"] == "pass" and len(doc["steps"]["steps_tried"]) == 12, log
    one_jvm(doc)
    assert leftover_processes() == []


def both_ways(tmp_path: Path, code: str, sink: str) -> dict[str, list[str]]:
    """Each step's evidence of a broken sink under Python kills (``mixed``) and whole-driver kills (``hard``)."""
    found = {}
    for mode in ("mixed", "hard"):
        rc, _doc, check, log = crash_anywhere(
            tmp_path / mode, f"{code}:{sink}", f"{code}:read_back", "--faults", mode
        )
        assert rc == 1 and check["observed"] == ["duplicate"], log
        found[mode] = per_step(check)
    assert leftover_processes() == []
    return found


@pytest.mark.heavy  # about 1 min: the 7 boundaries killed as whole drivers
def test_python_kills_and_driver_kills_agree_where_spark_memory_is_lost(tmp_path: Path) -> None:
    found = both_ways(tmp_path, f"{EX}/jvm_memory_dedup.py", "jvm_memory_sink")
    assert found["mixed"] == found["hard"] and len(found["hard"]) == 7, found


@pytest.mark.heavy  # about 2.5 min: the same 12 boundaries killed both ways
def test_python_kills_and_driver_kills_agree_on_the_two_transaction_window(tmp_path: Path) -> None:
    found = both_ways(tmp_path, f"{EX}/two_txn_foreach_batch.py", "two_txn_sink")
    assert found["mixed"] == found["hard"] and sum("20 duplicate" in d for d in found["hard"]) == 3, found
