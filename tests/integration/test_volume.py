"""Volume runs under real SIGKILLs (issue 13 point 1): the same scenarios at 10^5..10^6 rows.

The heavy tier runs the acceptance pair at 10^6 rows (the file sink holds under 3 kills; the naive
``foreachBatch`` append is caught with its duplicates located in the killed batch). The default suite keeps
one representative: 10^5 rows through the file sink with a kill, checked by the Arrow-side verdict."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.engine.pool import DriverPool
from harness.engine.report import to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument
from tests.integration.clirun import TOKEN_PREFIX, leftover_processes


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DriverPool]:
    shared = DriverPool(tmp_path_factory.mktemp("pool"), "local[2]", {}, token=TOKEN_PREFIX + "vol", standby=True)
    yield shared
    shared.close()
    assert leftover_processes() == [], "a harness run left processes behind"


def _run(pool: DriverPool, run_dir: Path, spec: RunSpec) -> tuple[dict[str, Any], str]:
    log: list[str] = []
    doc = to_json(run_spec(spec, run_dir=run_dir, echo=log.append, pool=pool))
    return doc, "\n".join(log[-30:])


def test_a_1e5_row_run_through_the_file_sink_holds_under_a_kill(pool: DriverPool, tmp_path: Path) -> None:
    kill = parse_kill_argument("after_offsets_logged:3")
    spec = RunSpec("file_sink_stateless", 2, kills=0, rounds=2, volume=100_000, batch_rows=20_000, extra_faults=(kill,))
    doc, log = _run(pool, tmp_path / "run", spec)
    assert doc["verdict"] == "exactly-once", log
    assert [k["point"] for k in doc["kills_fired"]] == ["after_offsets_logged"], log
    assert len(doc["batches"]) == 6, log  # 50,000 rows a round in batches of at most 20,000
    assert doc["expected_rows"] == doc["observed_rows"] > 60_000  # the filter keeps about two thirds


@pytest.mark.heavy
def test_a_1e6_row_run_through_the_file_sink_holds_under_three_kills(pool: DriverPool, tmp_path: Path) -> None:
    spec = RunSpec("file_sink_stateless", 4, kills=3, volume=1_000_000)
    doc, log = _run(pool, tmp_path / "run", spec)
    assert doc["verdict"] == "exactly-once", log
    assert len(doc["kills_fired"]) == 3, log
    assert doc["expected_rows"] == doc["observed_rows"] > 600_000


@pytest.mark.heavy
def test_a_1e6_row_naive_foreach_batch_append_is_caught(pool: DriverPool, tmp_path: Path) -> None:
    kill = parse_kill_argument("sink.commit.after:1")
    spec = RunSpec("foreachbatch_append_naive", 4, kills=0, rounds=2, volume=1_000_000, extra_faults=(kill,))
    doc, log = _run(pool, tmp_path / "run", spec)
    assert doc["verdict"] == "violated", log
    assert {a["kind"] for a in doc["anomalies"]} == {"duplicate"}, log
    assert doc["anomaly_counts"]["duplicate"] > 100_000  # the whole replayed batch, counted where the data is
    assert {a["batch_id"] for a in doc["anomalies"]} == {1}, log  # the capped sample, located in the killed batch
