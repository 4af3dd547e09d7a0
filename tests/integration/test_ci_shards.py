"""The README's "Running in CI" matrix job, run as written: two shards of a 20-example campaign over the
at-least-once ``foreachBatch`` sink share one example database; the first finds and shrinks the duplicate, the
second (the rerun a later CI run is) replays that failure as its first example; ``merge``, run where the
artifacts were downloaded, gives one verdict, one JSON and one HTML page that Chromium renders."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

from tests.integration.clirun import ROOT, assert_renders, harness, leftover_processes

MATRIX = "${{ matrix.shard }}"


def readme_ci_commands() -> tuple[str, str]:
    """The job's two ``run: python -m harness ...`` lines: the shard's campaign and the merge."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Sharded campaigns") :]
    job = section.split("```yaml", 1)[1].split("```", 1)[0]
    runs = [line.split("run: ", 1)[1] for line in job.splitlines() if "run: python -m harness " in line]
    assert len(runs) == 2 and MATRIX in runs[0] and " merge " in runs[1], runs
    return runs[0], runs[1]


def _args(command: str, shard: int | None = None) -> list[str]:
    words = shlex.split(command.replace(MATRIX, str(shard)) if shard else command)
    assert words[:3] == ["python", "-m", "harness"], words
    return words[3:]


def _first_example(stderr: str) -> str:
    """The schedule of a campaign's first example, as its progress line prints it."""
    line = next(x for x in stderr.splitlines() if re.match(r"\[\s*1/\d+\]", x))
    return re.split(r"\s(?:violated|exactly-once)\s+", line, maxsplit=1)[1].strip()


def test_the_readme_ci_matrix_shards_share_a_failure_and_merge_to_one_verdict(tmp_path: Path) -> None:
    chaos, merge = readme_ci_commands()
    runner = tmp_path / "runner"  # the CI job's checkout: out/ and the cached .harness/examples live here
    runner.mkdir()
    rc1, _, err1 = harness(*_args(chaos, 1), cwd=runner)
    first = json.loads((runner / "out" / "shard-1.json").read_text())
    assert rc1 == 1 and first["verdict"] == "violated", err1[-3000:]
    assert first["shard"] == "1/2" and first["blocks"] == [0] and first["replayed_first"] == 0
    assert "example database .harness/examples: 0 saved failure(s) replayed first" in err1
    assert (runner / ".harness" / "examples").is_dir()

    rc2, out2, err2 = harness(*_args(chaos, 2), cwd=runner)
    second = json.loads((runner / "out" / "shard-2.json").read_text())
    assert rc2 == 1 and second["verdict"] == "violated", err2[-3000:]
    assert second["blocks"] == [1] and second["replayed_first"] >= 1
    # the failure shard 1 shrank is shard 2's first example, before anything of its own block
    assert _first_example(err2) == first["minimal_schedule"], (err2[:2000], first["minimal_schedule"])
    assert "shard             2/2: block(s) 1" in out2

    downloaded = tmp_path / "merge-job"  # the merge job: the shards' artifacts downloaded into out/
    shutil.copytree(runner / "out", downloaded / "out")
    shutil.rmtree(runner / "out")
    rc, out, _ = harness(*_args(merge), cwd=downloaded)
    assert rc == 1 and out.startswith("violated: campaign foreachbatch_append_naive (seed 1, profile ci, 20"), out
    merged = json.loads((downloaded / "out" / "merged.json").read_text())
    assert merged["verdict"] == "violated" and merged["missing"] == [] and merged["shards"] == 2
    assert [f["shard"] for f in merged["failures"]] == ["1/2", "2/2"]
    for failure in merged["failures"]:  # linked inside the downloaded artifact, not where the shard ran
        assert Path(failure["timeline"]).is_relative_to(downloaded) and Path(failure["timeline"]).exists()
    assert leftover_processes() == []
    assert_renders(downloaded / "out" / "merged.html", tmp_path, "violated", "1/2", "2/2", "timeline")
