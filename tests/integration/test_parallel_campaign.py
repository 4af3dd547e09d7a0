"""`harness chaos --workers N`: examples split over processes, each with its own JVMs and directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.chaos.parallel import worker_seed
from tests.integration.clirun import harness, leftover_processes


@pytest.mark.heavy  # CI time: the xdist suite test runs campaigns in parallel processes
def test_two_workers_split_the_examples_and_merge_the_verdict(tmp_path: Path) -> None:
    work = tmp_path / "work"
    rc, out, err = harness(
        "chaos", "file_sink_stateless", "--examples", "2", "--seed", "1", "--profile", "ci", "--workers", "2",
        "--work-dir", str(work), "--json", str(tmp_path / "c.json"),
    )  # fmt: skip
    assert rc == 0, out + err[-3000:]
    doc = json.loads((tmp_path / "c.json").read_text())
    assert (doc["verdict"], doc["examples"], doc["workers"]) == ("exactly-once", 2, 2)
    assert out.splitlines()[0].startswith("no violation in 2 example(s) (scenario=file_sink_stateless, seed=1")
    assert out.splitlines()[-1].endswith("--seed 1 --profile ci --workers 2")
    # Each worker ran its own example with its own driver (own JVM) in its own directory.
    for i in (0, 1):
        assert (work / f"worker-{i}" / "logs" / "driver-1.log").exists()
        assert f"[w{i}] [    1/1]" in err
    assert worker_seed(1, 1) != 1
    assert leftover_processes() == []
