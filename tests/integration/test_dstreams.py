"""DStream applications under real SIGKILLs with ``getOrCreate`` recovery (issue 31).

Default tier (measured on the 2-core machine): the naive ``foreachRDD`` is caught: duplicates named by batch,
batch time and input file (~25 s); bad input: a setup function without a checkpoint, one reading a
``queueStream``, one reading another directory: one line, exit 2 (~15 s). A correct DStream application under
3 seeded SIGKILLs is test_user_references.py's default case (a user's module, the default run directory).
The ``heavy`` tier runs the idempotent ``foreachRDD`` under 3 seeded SIGKILLs with ``inspect`` naming a deleted
checkpoint file, ``updateStateByKey`` totals under 2 SIGKILLs, the state twin kept outside Spark,
``saveAsTextFiles`` under kills, and three chaos campaigns on the naive twin, each shrunk and replayed 3/3
(``bin/test-heavy``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.clirun import harness, harness_json, leftover_processes


def _history(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]


@pytest.mark.heavy  # CI time (~55 s): test_user_references.py's DStream pipeline under 3 kills is the default's
def test_idempotent_foreach_rdd_holds_under_3_sigkills_and_inspect_names_a_deleted_file(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ("run", "dstream_foreach", "--kills", "3", "--seed", "7", "--run-dir", str(run_dir))
    rc, doc, log = harness_json(tmp_path / "r.json", *args)
    assert rc == 0 and doc["verdict"] == "exactly-once", log
    assert len(doc["kills_fired"]) == 3 and doc["observed_rows"] == doc["expected_rows"] > 0
    assert {k["action"] for k in doc["kills_fired"]} == {"kill_process_group"}
    runs = [
        e["value"] for e in _history(run_dir) if e["f"] == "run" and e["type"] == "ok" and "recovered" in e["value"]
    ]
    assert sum(1 for r in runs if r["recovered"]) >= 3, runs  # each killed driver's successor used getOrCreate
    assert [b["batch_id"] for b in doc["batches"]] == [0, 1, 2] and all(b["time_ms"] for b in doc["batches"])

    checkpoint = run_dir / "checkpoint"
    rc, out, err = harness("inspect", str(checkpoint))
    assert rc == 0 and "DStream checkpoint OK" in out and "batch times" in out, out + err
    pairs = sorted(p.name for p in checkpoint.glob("checkpoint-*.bk"))
    victim = checkpoint / pairs[len(pairs) // 2].removesuffix(".bk")
    victim.unlink()
    rc, out, err = harness("inspect", str(checkpoint))
    assert rc == 1 and "[dstream-missing]" in out and victim.name in out and "Traceback" not in out + err, out
    assert leftover_processes() == []


def test_naive_foreach_rdd_duplicates_are_named_by_batch_time_and_file(tmp_path: Path) -> None:
    args = ("run", "dstream_foreach_naive", "--rounds", "2", "--kill", "dstream.batch.end:1", "--seed", "1")
    rc, doc, log = harness_json(tmp_path / "r.json", *args, "--run-dir", str(tmp_path / "run"))
    assert rc == 1 and doc["verdict"] == "violated", log
    anomalies = doc["anomalies"]
    assert anomalies and {a["kind"] for a in anomalies} == {"duplicate"}
    assert {a["batch_id"] for a in anomalies} == {1}
    for a in anomalies:
        file = f"file p{a['partition']:04d}-"
        assert "batch time 20" in a["sink_where"] and file in a["sink_where"], a
    assert "dstream.batch.end of batch 1" in log and "batch time" in log


@pytest.mark.heavy  # CI time (~60 s): the foreachRDD pair above and the user pair keep DStreams in the default
def test_update_state_by_key_totals_hold_under_2_sigkills(tmp_path: Path) -> None:
    args = ("run", "dstream_state", "--kills", "2", "--rounds", "3", "--seed", "5")
    rc, doc, log = harness_json(tmp_path / "r.json", *args, "--run-dir", str(tmp_path / "run"))
    assert rc == 0 and doc["verdict"] == "exactly-once" and len(doc["kills_fired"]) == 2, log
    assert doc["expected_rows"] == 8  # one row per group


@pytest.mark.parametrize(
    ("ref", "words"),
    [
        (
            "tests.integration.dstream_pipelines:NO_CHECKPOINT",
            "sets no checkpoint: call ssc.checkpoint(ctx.checkpoint)",
        ),
        ("tests.integration.dstream_pipelines:QUEUE_STREAM", "reads a queueStream, which cannot be checkpointed"),
        ("tests.integration.dstream_pipelines:OTHER_DIRECTORY", "the harness feeds ctx.input_dir"),
    ],
)
def test_a_bad_setup_function_is_refused_in_one_line(tmp_path: Path, ref: str, words: str) -> None:
    rc, out, err = harness("run", ref, "--kills", "0", "--rounds", "1", "--run-dir", str(tmp_path / "run"))
    last = err.strip().splitlines()[-1]
    assert rc == 2 and words in last and last.startswith("harness:"), err
    assert "Traceback" not in err and not out.strip(), err


@pytest.mark.heavy
def test_totals_kept_outside_spark_over_count_a_rerun_batch(tmp_path: Path) -> None:
    args = ("run", "dstream_state_outside", "--rounds", "2", "--kill", "dstream.batch.end:1", "--seed", "5")
    rc, doc, log = harness_json(tmp_path / "r.json", *args, "--run-dir", str(tmp_path / "run"))
    assert rc == 1 and {a["kind"] for a in doc["anomalies"]} == {"wrong-value"}, log


@pytest.mark.heavy
def test_save_as_text_files_under_kills(tmp_path: Path) -> None:
    """``saveAsTextFiles`` rewrites a re-run batch's directory (measured): exactly-once under kills at both points."""
    args = ("run", "dstream_save_text", "--kills", "3", "--seed", "3")
    rc, doc, log = harness_json(tmp_path / "r.json", *args, "--run-dir", str(tmp_path / "run"))
    assert rc == 0 and doc["verdict"] == "exactly-once" and len(doc["kills_fired"]) == 3, log


@pytest.mark.heavy
@pytest.mark.parametrize("seed", [11, 12, 13])
def test_chaos_finds_shrinks_and_replays_the_naive_twin(tmp_path: Path, seed: int) -> None:
    work = tmp_path / "chaos"
    rc, out, err = harness(
        "chaos", "dstream_foreach_naive", "--examples", "8", "--seed", str(seed), "--work-dir", str(work)
    )
    assert rc == 1 and "violation found and shrunk" in out + err and "duplicate" in out + err, out + err[-3000:]
    rc, out, err = harness("replay", str(work / "bundle"), "--times", "3")
    assert "reproduced 3/3" in out + err, out + err[-3000:]
