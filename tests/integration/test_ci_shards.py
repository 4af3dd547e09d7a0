"""docs/ci.md's sharded matrix job, its ``run:`` lines executed in bash as a runner does: run 1's shard 1
finds and shrinks the duplicate of the at-least-once ``foreachBatch`` sink and saves it in its example database;
run 1's merge job assembles the shards' artifacts (results, bundles, database) and gives a verdict although
shard 2's job left nothing; run 2's shard 2 restores that database (the cache) and replays the failure as its
first example; ``merge`` of the two shards gives one verdict, one JSON and one HTML page Chromium renders."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.spark.procs import TOKEN_PREFIX_ENV
from tests.integration import clirun
from tests.integration.clirun import ROOT, TOKEN_PREFIX, assert_renders, leftover_processes

MATRIX = "${{ matrix.shard }}"
DATABASE = Path(".harness") / "examples"


def readme_job() -> str:
    text = (ROOT / "docs" / "ci.md").read_text()
    section = text[text.index("## Sharded campaigns") :]
    return section.split("```yaml", 1)[1].split("```", 1)[0]


def readme_ci_commands() -> tuple[str, str]:
    """The job's two ``run: python -m harness ...`` lines: the shard's campaign and the merge."""
    runs = [line.split("run: ", 1)[1] for line in readme_job().splitlines() if "run: python -m harness " in line]
    assert len(runs) == 2 and MATRIX in runs[0] and " merge " in runs[1], runs
    return runs[0], runs[1]


def bash(line: str, cwd: Path, shard: int | None = None) -> tuple[int, str, str]:
    """A ``run:`` line in bash in ``cwd`` (``python`` is this interpreter; the matrix value substituted)."""
    env = {**os.environ, TOKEN_PREFIX_ENV: TOKEN_PREFIX, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    if clirun.CHILD_TMPDIR is not None:
        env["TMPDIR"] = str(clirun.CHILD_TMPDIR)
    command = line.replace(MATRIX, str(shard)) if shard is not None else line
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    return proc.returncode, proc.stdout, proc.stderr


def download(artifacts: list[Path], into: Path) -> None:
    """``download-artifact`` with ``merge-multiple``: every job's ``out/`` and database in one tree."""
    for job in artifacts:
        for part in ("out", str(DATABASE)):
            if (job / part).exists():
                shutil.copytree(job / part, into / part, dirs_exist_ok=True)


def _first_example(stderr: str) -> str:
    """The schedule of a campaign's first example, as its progress line prints it."""
    line = next(x for x in stderr.splitlines() if re.match(r"\[\s*1/\d+\]", x))
    return re.split(r"\s(?:violated|exactly-once)\s+", line, maxsplit=1)[1].strip()


@pytest.mark.heavy  # CI time: shards, merge and the shared database are unit-tested (test_shards, test_merge)
def test_the_readme_ci_matrix_shares_a_failure_across_runs_and_merges_to_one_verdict(tmp_path: Path) -> None:
    job = readme_job()
    for needed in ("actions/cache/restore@v4", "actions/cache/save@v4", "include-hidden-files: true",
                   "merge-multiple: true", f"path: {DATABASE}"):  # fmt: skip
        assert needed in job, f"the docs/ci.md job lost {needed!r}: the database would not reach the next run"
    assert job.index("actions/cache/save@v4") > job.index(" merge ") and "if: always()" in job.split("cache/save")[1]
    chaos, merge = readme_ci_commands()

    shard1 = tmp_path / "run1-shard1"  # run 1: shard 1's job (shard 2's job left nothing: it was cancelled)
    shard1.mkdir()
    rc, _, err = bash(chaos, shard1, 1)
    first = json.loads((shard1 / "out" / "shard-1.json").read_text())
    assert rc == 1 and first["verdict"] == "violated", err[-3000:]
    assert first["shard"] == "1/2" and first["blocks"] == [0] and first["replayed_first"] == 0

    merge1 = tmp_path / "run1-merge"  # run 1's merge job: the violation stands, shard 2 is named missing
    download([shard1], merge1)
    rc, out, _ = bash(merge, merge1)
    assert rc == 1 and out.startswith("violated: ") and "shard 2/2    missing" in out, out
    cache = merge1 / DATABASE  # what actions/cache/save keeps for the next run

    shard2 = tmp_path / "run2-shard2"  # run 2: shard 2's job restores the cache first
    shutil.copytree(cache, shard2 / DATABASE)
    rc, out, err = bash(chaos, shard2, 2)
    second = json.loads((shard2 / "out" / "shard-2.json").read_text())
    assert rc == 1 and second["verdict"] == "violated", err[-3000:]
    assert second["blocks"] == [1] and second["replayed_first"] >= 1
    assert _first_example(err) == first["minimal_schedule"], (err[:2000], first["minimal_schedule"])
    assert "shard             2/2: block(s) 1" in out

    final = tmp_path / "merge"  # both shards' artifacts, downloaded where neither ran
    download([shard1, shard2], final)
    shutil.rmtree(shard1 / "out")
    rc, out, _ = bash(merge, final)
    assert rc == 1 and out.startswith("violated: campaign foreachbatch_append_naive (seed 1, profile ci, 20"), out
    merged = json.loads((final / "out" / "merged.json").read_text())
    assert merged["verdict"] == "violated" and merged["missing"] == [] and merged["shards"] == 2
    assert [f["shard"] for f in merged["failures"]] == ["1/2", "2/2"]
    for failure in merged["failures"]:  # linked inside the downloaded artifact, not where the shard ran
        assert Path(failure["timeline"]).is_relative_to(final) and Path(failure["timeline"]).exists()
    assert leftover_processes() == []
    assert_renders(final / "out" / "merged.html", tmp_path, "violated", "1/2", "2/2", "timeline")
