"""The default suite's representative of the findings catalogue (docs/findings.toml; the whole catalogue is
the heavy tier's, ``bin/test-findings``): one entry's minimal schedule, as its campaign shrank it, replayed on
both sides.

The entry is SPARK-30462 (Spark's file sink read by listing its directory): the schedule ``kill at source.read
of batch 0`` over one round of 1+1 rows leaves the 0-byte part file of the killed write task; the team's reader
that lists the directory (pyarrow) fails on it, while the same pipeline read through the sink's log (Spark's
reader, the workaround) is exactly-once under the same fault over a round of 20+20 rows. Both sides run on
this environment's release, as the entry says, on the session's driver pool (the kill meets its standby). The
campaign that finds and shrinks it without being told is the heavy tier's."""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import pytest

from harness.engine.pool import DriverPool
from harness.engine.report import render_text, to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument
from harness.spark.releases import pyspark_version

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
ENTRY = next(e for e in tomllib.loads((ROOT / "docs" / "findings.toml").read_text())["finding"]
             if e["id"] == "spark-30462")  # fmt: skip
#: The shrunk schedule of the entry's campaign (docs/findings.md: "minimal schedule  seed 0, 1 round(s) [1+1],
#: kill at source.read of batch 0"): its seed, its one round and its one fault.
SEED = 0
ROWS = ((1, 1),)
KILL = "source.read:0"


#: The held side's round: the same fault over more rows, so that "exactly-once" is about rows (the shrunk
#: round's two rows are both filtered out by the pipeline: its oracle is empty).
HELD_ROWS = ((20, 20),)


def _play(
    pool: DriverPool, run_dir: Path, scenario: str, rows: tuple[tuple[int, int], ...]
) -> tuple[dict[str, Any], str]:
    fault = dataclasses.replace(parse_kill_argument(KILL), id="x1")
    assert fault.describe() == ENTRY["shrunk_to"]  # the catalogue's schedule, not another one
    log: list[str] = []
    spec = RunSpec(scenario, SEED, kills=0, rows=rows, extra_faults=(fault,))
    outcome = run_spec(spec, run_dir, log.append, pool=pool)
    return to_json(outcome), "\n".join([*log[-30:], render_text(outcome)])


def test_the_shrunk_schedule_of_a_finding_fails_its_reader_and_holds_with_the_workaround(
    pool: DriverPool, tmp_path: Path
) -> None:
    affected, held = ENTRY["affected"], ENTRY["held"]
    if not affected["pyspark"] == held["pyspark"] == pyspark_version():  # both sides are one release's
        pytest.skip(f"the entry is measured on PySpark {affected['pyspark']}; this is {pyspark_version()}")
    doc, text = _play(pool, tmp_path / "affected", ENTRY["scenario"], ROWS)
    assert doc["verdict"] == affected["verdict"], text
    assert affected["says"] in doc["pipeline_failed"]["type"] + doc["pipeline_failed"]["message"], text
    assert [k["point"] for k in doc["kills_fired"]] == ["source.read"], text
    doc, text = _play(pool, tmp_path / "held", held["scenario"], HELD_ROWS)
    assert doc["verdict"] == held["verdict"] and doc["kills_fired"], text
    assert doc["observed_rows"] == doc["expected_rows"] > 0, text
