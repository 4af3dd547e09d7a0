"""``python -m harness inspect CHECKPOINT --delta TABLE``: the Delta log read next to the checkpoint.

Checkpoints are synthetic (``synth_checkpoint``, PySpark 4.3's exact shape); tables are hand-made logs in Delta
4.4's shape (``tests/unit/test_delta_log.py``) or real delta-rs tables. Each check is shown both to fire (exit 1
naming the batch and the Delta version) and to stay silent on a consistent pair (exit 0, no delta finding).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

from harness.cli.main import main
from harness.inspector import inspect_checkpoint
from harness.inspector.synth import synth_checkpoint
from tests.unit.test_delta_log import commit_lines, spark_table, write_commit

pytestmark = pytest.mark.unit


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["inspect", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _ck(tmp_path: Path, batches: int, committed: int | None = None) -> tuple[Path, str]:
    ck = synth_checkpoint(tmp_path / "ck", batches, committed=committed)
    return ck, json.loads((ck / "metadata").read_text())["id"]


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code, out, err = _run(capsys, *argv, "--json")
    assert err == ""
    return code, json.loads(out)


def _delta_findings(doc: dict[str, Any]) -> list[tuple[str, int | None]]:
    return [(f["id"], f["batch_id"]) for f in doc["findings"] if f["id"].startswith("delta-")]


def _delta_rows(out: str) -> dict[int, list[str]]:
    """The text's "delta batches" table: batch id -> its cells."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("delta batches ")) + 2
    rows: dict[int, list[str]] = {}
    for ln in lines[start:]:
        if not ln.startswith("  "):
            break
        rows[int(ln.split()[0])] = ln.split()
    return rows


def _messages(doc: dict[str, Any], fid: str) -> list[str]:
    return [f["message"] for f in doc["findings"] if f["id"] == fid]


def test_clean_pair_exits_0_and_maps_each_batch_to_its_delta_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ck, qid = _ck(tmp_path, 4)
    t = spark_table(tmp_path / "t", [0, 1, 2, 3], qid)
    write_commit(t, 4, commit_lines(4, [], ["compacted.parquet"], operation="OPTIMIZE"))  # no txn: fine
    code, out, err = _run(capsys, str(ck), "--delta", str(t))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("checkpoint OK")
    assert f"delta table: {t} (Delta versions 0..4; txn app id {qid} (the checkpoint's query id))" in lines
    header = lines.index("delta batches (4 of 4, newest last):")
    assert lines[header + 1].split() == ["batch", "checkpoint", "delta", "version(s)"]
    assert _delta_rows(out) == {b: [str(b), "committed", str(b)] for b in range(4)}
    assert "delta-" not in out
    code, doc = _json(capsys, str(ck), "--delta", str(t))
    assert code == 0 and _delta_findings(doc) == []
    assert doc["delta"]["app_id"] == qid and doc["delta"]["app_id_source"] == "checkpoint metadata"
    assert [(b["batch_id"], b["delta_versions"]) for b in doc["delta"]["batches"]] == [(b, [b]) for b in range(4)]


def test_without_delta_the_json_delta_key_is_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, _ = _ck(tmp_path, 2)
    code, doc = _json(capsys, str(ck))
    assert code == 0 and doc["delta"] is None


def test_committed_batch_missing_from_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, qid = _ck(tmp_path, 5)
    t = spark_table(tmp_path / "t", [0, 1, 3, 4], qid)
    code, out, _ = _run(capsys, str(ck), "--delta", str(t))
    assert code == 1
    assert out.splitlines()[0].startswith("checkpoint INCONSISTENT: 1 violation(s) (delta-batch-missing)")
    assert _delta_rows(out)[2] == ["2", "committed", "-"]
    _, doc = _json(capsys, str(ck), "--delta", str(t))
    assert _delta_findings(doc) == [("delta-batch-missing", 2)]
    (msg,) = _messages(doc, "delta-batch-missing")
    assert msg.startswith(f"batch 2 is committed (commits/2) but no Delta commit carries txn({qid}, 2)")
    assert "txn 1 is in Delta version 1; txn 3 in Delta version 2" in msg and "lost" in msg


def test_the_same_txn_in_two_delta_commits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, qid = _ck(tmp_path, 3)
    t = spark_table(tmp_path / "t", [0, 1, 1, 2], qid)
    code, doc = _json(capsys, str(ck), "--delta", str(t))
    assert code == 1
    assert _delta_findings(doc) == [("delta-txn-repeated", 1)]
    (f,) = (f for f in doc["findings"] if f["id"] == "delta-txn-repeated")
    assert f["path"] == str(t / "_delta_log" / "00000000000000000002.json")
    assert f["message"].startswith(f"txn({qid}, 1) is in Delta versions 1 and 2: batch 1 was written to the table 2")
    assert "duplicated" in f["message"]


def test_table_ahead_of_the_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, qid = _ck(tmp_path, 3)  # e.g. restored from an older copy while the table kept batches 3 and 4
    t = spark_table(tmp_path / "t", [0, 1, 2, 3, 4], qid)
    code, out, _ = _run(capsys, str(ck), "--delta", str(t))
    assert code == 1
    rows = _delta_rows(out)
    assert (rows[3], rows[4]) == (["3", "not", "planned", "3"], ["4", "not", "planned", "4"])
    _, doc = _json(capsys, str(ck), "--delta", str(t))
    assert _delta_findings(doc) == [("delta-txn-ahead", 4)]
    (msg,) = _messages(doc, "delta-txn-ahead")
    assert msg.startswith(f"the table's newest txn({qid}, 4) (Delta version 4) is beyond the checkpoint's newest ")
    assert "planned batch 2 (offsets/2): on restart Spark plans batches 3..4 anew" in msg


def test_the_crash_window_is_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, qid = _ck(tmp_path, 4, committed=3)  # Delta committed batch 3, the kill came before commits/3
    t = spark_table(tmp_path / "t", [0, 1, 2, 3], qid)
    code, doc = _json(capsys, str(ck), "--delta", str(t))
    assert code == 0
    assert _delta_findings(doc) == [("delta-txn-uncommitted-batch", 3)]
    (msg,) = _messages(doc, "delta-txn-uncommitted-batch")
    assert msg.startswith(f"batch 3 is in the table (txn({qid}, 3), Delta version 3) but has no commits/3")
    spark_table(tmp_path / "t2", [0, 1, 2], qid)  # the kill came before the Delta commit: nothing to say
    code, doc = _json(capsys, str(ck), "--delta", str(tmp_path / "t2"))
    assert code == 0 and _delta_findings(doc) == []


@pytest.mark.parametrize(
    ("damage", "file", "problem"),
    [
        ("garbage", "00000000000000000002.json", "line 2 is not JSON ("),
        ("gap", "00000000000000000001.json", "version 1 missing between 0 and 2"),
    ],
)
def test_a_damaged_log_is_a_finding_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, file: str, problem: str
) -> None:
    ck, qid = _ck(tmp_path, 3)
    t = spark_table(tmp_path / "t", [0, 1, 2], qid)
    log = t / "_delta_log"
    if damage == "garbage":
        (log / file).write_text('{"commitInfo":{}}\n{"add":{"pa')
    else:
        (log / file).unlink()
    code, out, err = _run(capsys, str(ck), "--delta", str(t))
    assert (code, err) == (1, "")
    assert "Traceback" not in out
    assert f"delta table: {t}: log unreadable (see delta-log-corrupt below)" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("  [delta-log-corrupt]"))
    assert line.startswith(f"  [delta-log-corrupt] {log / file}: {problem}")
    _, doc = _json(capsys, str(ck), "--delta", str(t))
    assert _delta_findings(doc) == [("delta-log-corrupt", None)]
    assert doc["delta"]["error"].startswith(problem)


@pytest.mark.parametrize("kind", ["plain-dir", "missing", "delta-log-dir", "checkpoint"])
def test_delta_on_something_else_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    ck, qid = _ck(tmp_path, 2)
    t = spark_table(tmp_path / "t", [0, 1], qid)
    (tmp_path / "plain").mkdir()
    target = {
        "plain-dir": tmp_path / "plain",
        "missing": tmp_path / "nope",
        "delta-log-dir": t / "_delta_log",
        "checkpoint": ck,
    }[kind]
    code, out, err = _run(capsys, str(ck), "--delta", str(target))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"harness inspect: {target}: ")
    assert "Traceback" not in err
    hint = {"missing": "does not exist", "delta-log-dir": "is a _delta_log directory; give the table's root"}
    assert hint.get(kind, "not a Delta table (no _delta_log") in err


def test_option_misuse_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, qid = _ck(tmp_path, 2)
    t = spark_table(tmp_path / "t", [0, 1], qid)
    code, out, err = _run(capsys, str(ck), "--txn-app-id", "app")
    assert (code, out) == (2, "")
    assert (
        err == "harness inspect: --txn-app-id: applies only with --delta TABLE (the Delta table whose txns it names)\n"
    )
    code, out, err = _run(capsys, "diff", str(ck), str(ck), "--delta", str(t))
    assert (code, out, err) == (2, "", "harness inspect: --delta: applies to one checkpoint, not to inspect diff\n")
    with pytest.raises(ValueError, match="txn_app_id applies only with delta_table"):
        inspect_checkpoint(ck, txn_app_id="app")


def test_user_chosen_txn_app_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, _ = _ck(tmp_path, 4)  # a foreachBatch writer: txnAppId="orders-sink", txnVersion=batch id
    t = spark_table(tmp_path / "t", [0, 1, 3], "orders-sink")
    code, doc = _json(capsys, str(ck), "--delta", str(t))  # the query id matches no txn: one note, no check
    assert code == 0 and _delta_findings(doc) == [("delta-no-txn", None)]
    assert "(it holds txns for orders-sink)" in _messages(doc, "delta-no-txn")[0]
    code, doc = _json(capsys, str(ck), "--delta", str(t), "--txn-app-id", "orders-sink")
    assert code == 1 and _delta_findings(doc) == [("delta-batch-missing", 2)]
    assert doc["delta"]["app_id"] == "orders-sink" and doc["delta"]["app_id_source"] == "--txn-app-id"
    write_commit(t, 3, commit_lines(3, [("orders-sink", 2)], ["late.parquet"]))
    code, out, _ = _run(capsys, str(ck), "--delta", str(t), "--txn-app-id", "orders-sink")
    assert code == 0 and "txn app id orders-sink (--txn-app-id)" in out


def test_writes_without_any_txn_give_one_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, _ = _ck(tmp_path, 6)
    t = tmp_path / "t"
    for v in range(6):
        write_commit(t, v, commit_lines(v, [], [f"part-{v}.parquet"], operation="WRITE"))
    code, doc = _json(capsys, str(ck), "--delta", str(t))
    assert code == 0 and _delta_findings(doc) == [("delta-no-txn", None)]
    (msg,) = _messages(doc, "delta-no-txn")
    assert "its writes are not idempotent" in msg and "or --txn-app-id is wrong" in msg
    assert "batches 0..5 not checked" in msg


def test_cleaned_up_history_checks_from_the_delta_checkpoint_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ck, qid = _ck(tmp_path, 7)
    t = tmp_path / "t"
    for batch in (0, 1, 2, 3):
        _delta_rs_write(t, qid, batch)
    DeltaTable(str(t)).create_checkpoint()  # Delta version 3 holds txn(qid, 3) only
    for batch in (4, 6):  # batch 5 never reached the table
        _delta_rs_write(t, qid, batch)
    for v in (0, 1, 2):
        (t / "_delta_log" / f"{v:020d}.json").unlink()
    code, out, _ = _run(capsys, str(ck), "--delta", str(t))
    assert code == 1
    assert "  history starts at Delta checkpoint 3 (older commits were cleaned up)" in out.splitlines()
    rows = _delta_rows(out)
    assert (rows[2], rows[3], rows[5]) == (["2", "committed", "?"], ["3", "committed", "3"], ["5", "committed", "-"])
    _, doc = _json(capsys, str(ck), "--delta", str(t))
    assert _delta_findings(doc) == [("delta-batches-unchecked", 0), ("delta-batch-missing", 5)]
    (note,) = _messages(doc, "delta-batches-unchecked")
    assert note.startswith(f"batches 0..2 committed before txn({qid}, 3), the first the log holds (Delta version 3)")
    assert "history starts at checkpoint 3" in note


def _delta_rs_write(table: Path, app: str, batch: int) -> None:
    data = pa.table({"id": [batch]})
    props = CommitProperties(app_transactions=[Transaction(app, batch)])
    write_deltalake(str(table), data, mode="append", commit_properties=props)


def test_a_real_delta_rs_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, qid = _ck(tmp_path, 3)
    t = tmp_path / "t"
    for batch in range(3):
        _delta_rs_write(t, qid, batch)
    code, doc = _json(capsys, str(ck), "--delta", str(t))
    assert code == 0 and _delta_findings(doc) == []
    _delta_rs_write(t, qid, 2)  # a replayed batch: delta-rs does not skip it by itself (delta-rs #2580)
    code, doc = _json(capsys, str(ck), "--delta", str(t))
    assert code == 1 and _delta_findings(doc) == [("delta-txn-repeated", 2)]
    assert _messages(doc, "delta-txn-repeated")[0].startswith(f"txn({qid}, 2) is in Delta versions 2 and 3")


def test_limit_caps_the_delta_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, qid = _ck(tmp_path, 10)
    t = spark_table(tmp_path / "t", list(range(10)), qid)
    code, out, _ = _run(capsys, str(ck), "--delta", str(t), "--limit", "3")
    assert code == 0
    assert "delta batches (3 of 10; 7 older hidden, --limit 0 shows all):" in out.splitlines()
    code, out, _ = _run(capsys, str(ck), "--delta", str(t), "--limit", "0")
    assert "delta batches (10 of 10, newest last):" in out.splitlines()


def test_no_query_id_and_no_app_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, qid = _ck(tmp_path, 2)
    t = spark_table(tmp_path / "t", [0, 1], qid)
    (ck / "metadata").unlink()
    code, doc = _json(capsys, str(ck), "--delta", str(t))
    assert code == 1  # metadata-missing
    assert _delta_findings(doc) == [("delta-app-unknown", None)]
    code, doc = _json(capsys, str(ck), "--delta", str(t), "--txn-app-id", qid)
    assert _delta_findings(doc) == []
