"""A query Spark fails after restarting it from its checkpoint is a failure of the subject (verdict
``recovery-failed``, exit 1, a violation a campaign shrinks), named by the fault before it, the batch and the JVM
exception; a failure after a daemon's death, a deploy, damage or no fault at all stays no verdict, one after a
crash and a benign nemesis (new Kafka partitions, SPARK-53560) is the subject's (no Spark: the error
text is the one measured on PySpark 4.1.4 with Spark's Kafka connector 4.1.1, SPARK-55271)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.chaos.campaign import _violates
from harness.engine.between import Applied
from harness.engine.outcome import RECOVERY_FAILED, RunOutcome, jvm_exception, recovery_failure
from harness.engine.report import render_text, summary_line, to_json
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from scenarios.sources import SourceDamage
from tests.unit.test_user_raised_report import checkpoint

pytestmark = pytest.mark.unit

NPE = (
    "the streaming query failed loudly in driver-3: [STREAM_FAILED] Query [id = 91ed04eb, runId = 2] terminated "
    'with exception: Cannot invoke "scala.collection.IterableOps.map(scala.Function1)" because the return value of '
    '"scala.Option.get()" is null SQLSTATE: XXKST\n  log: {log}'
)
LOG = """26/11/28 00:58:36 ERROR MicroBatchExecution: Query q [id = 91ed04eb] terminated with error
java.lang.NullPointerException: Cannot invoke "scala.collection.IterableOps.map(scala.Function1)" because ...
\tat org.apache.spark.sql.kafka010.KafkaMicroBatchStream$.metrics(KafkaMicroBatchStream.scala:520)
"""


def kill(index: int, batch: int, action: str = "kill_process_group", point: str = "after_offsets_logged") -> Any:
    description = f"k{index}: kill at {point} of batch {batch}"
    return {"history_index": index, "id": f"k{index}", "point": point, "action": action, "batch": batch,
            "description": description}  # fmt: skip


def error_with_log(tmp_path: Path) -> str:
    log = tmp_path / "driver-3.log"
    log.write_text("INFO earlier lines\n" + LOG)
    return NPE.format(log=log)


def test_a_failure_after_a_restart_names_the_fault_the_batch_and_the_jvm_exception(tmp_path: Path) -> None:
    cp = checkpoint(tmp_path, 2, 2)  # Spark commits a batch before reporting its progress
    failure = recovery_failure(error_with_log(tmp_path), cp, [kill(4, 0, point="after_commit_logged"), kill(14, 1)])
    assert failure is not None
    assert failure.describe() == (
        "restarted from its checkpoint after fault #14 k14: kill at after_offsets_logged of batch 1, the query failed "
        'after batch 1 committed: java.lang.NullPointerException: Cannot invoke "scala.collection.IterableOps.map('
        'scala.Function1)" because the return value of "scala.Option.get()" is null SQLSTATE: XXKST'
    )
    in_batch = recovery_failure(error_with_log(tmp_path), checkpoint(tmp_path / "b", 2, 1), [kill(4, 1)])
    assert in_batch is not None and in_batch.when == "in batch 1"


def test_the_verdict_is_recovery_failed_exit_1_and_a_campaign_violation(tmp_path: Path) -> None:
    outcome = RunOutcome(RunSpec("kafka_file_sink", 1, kills=2), RunPaths(tmp_path), "exactly-once", [], [])
    outcome.query_failed = True
    outcome.error = error_with_log(tmp_path)
    outcome.recovery = recovery_failure(outcome.error, checkpoint(tmp_path, 1, 1), [kill(3, 0)])
    assert (outcome.verdict, outcome.exit_code, _violates(outcome)) == (RECOVERY_FAILED, 1, True)
    assert summary_line(outcome).startswith("recovery failed (scenario=kafka_file_sink, seed=1): restarted from")
    assert "Traceback" not in render_text(outcome)
    doc = to_json(outcome)
    assert doc["verdict"] == RECOVERY_FAILED and doc["recovery_failed"]["exception"] == "java.lang.NullPointerException"


@pytest.mark.parametrize(
    ("fired", "why"),
    [
        ([], "no fault: the query fails without any restart"),
        ([kill(3, 0), kill(5, 0, action="kill_broker")], "a broker's death last: not a restart from the checkpoint"),
        ([kill(3, 0), kill(5, 1, point="deploy")], "a new version was deployed last"),
        ([kill(3, 0), kill(5, 1, action="nemesis")], "a nemesis damaged the checkpoint or the input last"),
    ],
)
def test_no_restart_before_the_failure_is_no_verdict(tmp_path: Path, fired: list[Any], why: str) -> None:
    assert recovery_failure(error_with_log(tmp_path), checkpoint(tmp_path, 1, 0), fired) is None, why


def test_the_jvm_exception_comes_from_the_error_else_from_the_log_it_names(tmp_path: Path) -> None:
    assert jvm_exception("... terminated with exception: org.apache.kafka.common.errors.TimeoutException: x") == (
        "org.apache.kafka.common.errors.TimeoutException"
    )
    assert jvm_exception(error_with_log(tmp_path)) == "java.lang.NullPointerException"
    assert jvm_exception(NPE.format(log=tmp_path / "missing.log")) == ""
    assert jvm_exception("no log and no class") == ""


def test_a_failure_after_the_query_recovered_past_the_crash_is_no_verdict(tmp_path: Path) -> None:
    # Killed in batch 1; batches 1 and 2 committed after the restart; the query failed planning batch 3.
    assert recovery_failure(error_with_log(tmp_path), checkpoint(tmp_path, 3, 3), [kill(4, 1)]) is None
    # The batch after the crashed one still counts (a crash after batch 1's commit: batch 2 is the next to run).
    assert recovery_failure(error_with_log(tmp_path), checkpoint(tmp_path / "n", 3, 2), [kill(4, 1)]) is not None
    assert recovery_failure(error_with_log(tmp_path), checkpoint(tmp_path / "m", 4, 2), [kill(4, 1)]) is None


def nemesis(index: int, batch: int, damage: dict[str, Any] | None) -> Any:
    context = {"damage": damage} if damage else {}
    return {"history_index": index, "id": "n", "point": "source" if damage else "checkpoint", "action": "nemesis",
            "batch": batch, "description": f"nemesis n{index}", "context": context}  # fmt: skip


# What scenarios.kafka.faults records: new partitions are benign, an age-out that deleted unread records is not.
GREW = SourceDamage("added partition 2 to topic t (2 -> 3 partitions)", where="topic t", benign=True).to_json()
AGED = SourceDamage("deleted ...", ((0, 20, 25),), "topic t", "failOnDataLoss=true", False).to_json()


def test_a_failure_after_a_crash_and_a_benign_nemesis_is_the_subjects(tmp_path: Path) -> None:
    # SPARK-53560's path: killed before batch 0 committed, the topic grew a partition, the restart failed.
    fired = [kill(4, 0), nemesis(7, 0, GREW)]
    failure = recovery_failure(error_with_log(tmp_path), checkpoint(tmp_path, 1, 0), fired)
    assert failure is not None and failure.when == "in batch 0"
    assert failure.after == "#4 k4: kill at after_offsets_logged of batch 0, then #7 nemesis n7"


@pytest.mark.parametrize(
    ("fired", "why"),
    [
        ([kill(4, 0), nemesis(7, 0, AGED)], "unread records deleted: failing loudly is the right answer"),
        ([kill(4, 0), nemesis(7, 0, GREW), nemesis(8, 0, None)], "checkpoint damage after the benign one"),
        ([kill(4, 0), nemesis(7, 0, None), nemesis(8, 0, GREW)], "checkpoint damage before the benign one"),
        ([nemesis(7, 0, GREW)], "no crash: the query was not restarted after one"),
        ([nemesis(2, 0, AGED), kill(4, 0), nemesis(7, 0, GREW)], "records deleted before the crash"),
    ],
)
def test_damage_or_no_crash_around_a_benign_nemesis_is_no_verdict(tmp_path: Path, fired: list[Any], why: str) -> None:
    assert recovery_failure(error_with_log(tmp_path), checkpoint(tmp_path, 1, 0), fired) is None, why


def test_benign_survives_the_history_round_trip() -> None:
    assert SourceDamage.from_json(GREW).benign and not SourceDamage.from_json(AGED).benign
    assert Applied("add_partitions", "x", SourceDamage.from_json(GREW)).benign
    assert not Applied("delete_latest_commit", "deleted commits/3").benign


def test_a_benign_nemesis_before_the_crash_is_named_too(tmp_path: Path) -> None:
    failure = recovery_failure(error_with_log(tmp_path), checkpoint(tmp_path, 1, 0), [nemesis(2, 0, GREW), kill(4, 0)])
    assert failure is not None
    assert failure.after == "#2 nemesis n2; then #4 k4: kill at after_offsets_logged of batch 0"
