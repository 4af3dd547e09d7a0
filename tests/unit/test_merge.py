"""``merge``: shard results (the JSON ``chaos --shard I/N --json`` writes) as one verdict, one JSON and one HTML
summary; results of different campaigns, a shard given twice or a file that is not a result are refused with
the file named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.chaos.merge import MergeError, merge_results, merged_doc, merged_html, render_merged
from harness.chaos.profiles import get_profile
from harness.chaos.result import CampaignResult, ExampleRecord, campaign_doc
from harness.cli.main import main
from harness.engine.commandline import harness_prefix, shell_line
from harness.engine.spec import RunSpec

CI = get_profile("ci").with_examples(20)


def shard_result(tmp_path: Path, index: int, verdict: str = "exactly-once", **changes: object) -> Path:
    """The JSON file of shard ``index``/2 of a 20-example campaign, built by the code ``chaos --json`` uses."""
    result = CampaignResult("foreachbatch_append_naive", "at-least-once", 1, CI, shard=f"{index}/2")
    result.blocks = [index - 1]
    spec = RunSpec("foreachbatch_append_naive", 5, kills=0)
    record = ExampleRecord(1, spec, verdict, {}, ["SIGKILL at after_commit_logged of batch 1"], 3.0, "a summary")
    result.examples = [record] * 10
    result.duration_s = 40.0
    if verdict == "violated":
        bundle = tmp_path / f"shard{index}" / "bundle"
        bundle.mkdir(parents=True)
        (bundle / "timeline.html").write_text("<html></html>")
        result.failure, result.bundle, result.failure_report = record, bundle, {"anomalies": []}
    if verdict == "unknown":
        result.error = "driver could not start\ndetails"
    for key, value in changes.items():
        setattr(result, key, value)
    path = tmp_path / f"shard{index}.json"
    path.write_text(json.dumps(campaign_doc(result, tmp_path), default=str))
    return path


def test_one_violated_shard_makes_the_campaign_violated_with_its_replay(tmp_path: Path) -> None:
    merged = merge_results([shard_result(tmp_path, 2, "violated"), shard_result(tmp_path, 1)])
    assert merged.verdict == "violated" and merged.exit_code == 1 and merged.missing == []
    doc = merged_doc(merged)
    assert doc["examples"] == 20 and doc["faults_fired"] == 20 and doc["duration_s"] == 80.0
    assert [r["shard"] for r in doc["results"]] == ["1/2", "2/2"]  # in shard order, whatever the order given
    assert [f["shard"] for f in doc["failures"]] == ["2/2"]
    text = render_merged(merged)
    assert text.startswith("violated: campaign foreachbatch_append_naive (seed 1, profile ci, 20 examples in 2")
    assert f"replay: {shell_line(harness_prefix())} replay {(tmp_path / 'shard2' / 'bundle').resolve()}" in text
    page = tmp_path / "out" / "summary.html"
    html = merged_html(merged, page)
    assert html.count("<tr>") == 3 and 'class="badge bad">violated' in html
    assert 'href="../shard2/bundle/timeline.html"' in html  # relative to the page's directory


def test_all_shards_holding_is_exactly_once_and_a_missing_or_broken_shard_is_unknown(tmp_path: Path) -> None:
    both = merge_results([shard_result(tmp_path, 1), shard_result(tmp_path, 2)])
    assert both.verdict == "exactly-once" and both.exit_code == 0
    one = merge_results([shard_result(tmp_path, 1)])
    assert one.verdict == "unknown" and one.missing == ["2/2"] and one.exit_code == 2
    assert "shard 2/2    missing: no result" in render_merged(one)
    assert "missing</span>" in merged_html(one, tmp_path / "x.html")
    broken = merge_results([shard_result(tmp_path, 1), shard_result(tmp_path, 2, "unknown")])
    assert broken.verdict == "unknown" and "driver could not start" in render_merged(broken)


def test_results_of_different_campaigns_or_twice_the_same_shard_are_refused(tmp_path: Path) -> None:
    one = shard_result(tmp_path, 1)
    other = shard_result(tmp_path, 2, seed=2)
    with pytest.raises(MergeError, match=rf"{other}: seed is 2 but {one} has 1; merge only the shards of one"):
        merge_results([one, other])
    three = tmp_path / "three.json"
    three.write_text(json.dumps({**json.loads(one.read_text()), "shard": "2/3"}))
    with pytest.raises(MergeError, match=r"shard 2/3 but .* is one of 2 shards"):
        merge_results([one, three])
    with pytest.raises(MergeError, match="is also"):
        merge_results([one, one])
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(MergeError, match=f"{bad}: not JSON"):
        merge_results([bad])
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"verdict": "violated"}))
    with pytest.raises(MergeError, match="not a `chaos --json` campaign result"):
        merge_results([run])


def test_the_merge_command_writes_one_verdict_json_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = shard_result(tmp_path, 1), shard_result(tmp_path, 2, "violated")
    out = tmp_path / "merged"
    assert main(["merge", str(a), str(b), "--json", str(out / "m.json"), "--html", str(out / "m.html")]) == 1
    assert capsys.readouterr().out.startswith("violated: campaign foreachbatch_append_naive")
    assert json.loads((out / "m.json").read_text())["verdict"] == "violated"
    assert "<table" in (out / "m.html").read_text()
    # a shard job that wrote no result: its shard is missing, the verdict stands on the others
    assert main(["merge", str(a), str(tmp_path / "nope.json")]) == 2
    out = capsys.readouterr().out
    assert out.startswith("unknown: ") and "shard 2/2    missing" in out and "(not found: " in out
    assert main(["merge", str(b), str(tmp_path / "nope.json")]) == 1
    assert main(["merge", str(tmp_path / "nope.json")]) == 2
    assert "none of the result files exists" in capsys.readouterr().err


def test_bundles_are_found_beside_their_results_after_the_artifacts_moved(tmp_path: Path) -> None:
    """A CI merge job downloads the shards' artifacts elsewhere: links follow the result files."""
    ran = tmp_path / "runner"
    ran.mkdir()
    a, b = shard_result(ran, 1), shard_result(ran, 2, "violated")
    downloaded = tmp_path / "downloaded"
    shutil.copytree(ran, downloaded)
    shutil.rmtree(ran)
    merged = merge_results([downloaded / a.name, downloaded / b.name])
    (failure,) = merged_doc(merged)["failures"]
    assert failure["timeline"] == str((downloaded / "shard2" / "bundle" / "timeline.html").resolve())
    assert failure["bundle"] == str((downloaded / "shard2" / "bundle").resolve())
    kept = merge_results([shard_result(tmp_path, 2, "violated")])  # not moved: where the shard wrote it
    assert merged_doc(kept)["failures"][0]["bundle"] == str((tmp_path / "shard2" / "bundle").resolve())
