"""Verdicts do not depend on an idle machine (heavy tier): correct and broken library scenarios, each run once
idle and once beside two busy processes per core (started and stopped here), must give the same verdict, exit
code and anomaly kinds, with every planned kill fired. Under pressure, and only there, a run may end as no
verdict instead, when its report names the step the harness missed; each such case is an xfail carrying that
reason (so pytest's summary counts and lists them), never an anomaly blamed on the pipeline. Idle, a no verdict
fails. A refusal (an unknown scenario, missing jars) fails in both.

The cases cover the replayable source (stateless and stateful), Spark's file source (JSON, and CSV into a naive
sink), Python sinks, Kafka as a source, a Delta sink, a DStream application, a continuous ``rate`` query into
Kafka (its epoch targets) and a timed kill. The user DStream pair of the issue runs for seeds 1-5 idle and
beside two busy loops. ``pytest -n 2`` over this module is the third condition (its results carry that label).
Each case's outcome is appended to ``HARNESS_LOAD_RESULTS`` (default ``.harness/load-results.jsonl``) with the
session's id; docs/load.md has the margins this exercises and the measured table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.clirun import harness, leftover_processes
from tests.integration.test_user_references import DSTREAM, assert_run_verdict
from tests.integration.test_user_references import harness as user_harness

pytestmark = pytest.mark.heavy

Case = tuple[str, list[str], str, set[str]]

#: (scenario, run arguments, expected verdict, expected anomaly kinds). Broken ones with an explicit kill
#: that exposes their bug, correct ones under seeded kills.
CASES: list[Case] = [
    ("file_sink_stateless", ["--seed", "7", "--kills", "3"], "exactly-once", set()),
    ("foreachbatch_append_naive", ["--seed", "7", "--kill", "sink.commit.after:1"], "violated", {"duplicate"}),
    ("agg_watermark_append", ["--seed", "3", "--kills", "3"], "exactly-once", set()),
    ("file_source_json", ["--seed", "5", "--kills", "3"], "exactly-once", set()),
    ("scenarios.library.file_source_json:NAIVE_APPEND", ["--seed", "5", "--kill", "sink.commit.after:1"],
     "violated", {"duplicate"}),
    ("python_sink_transactional", ["--seed", "2", "--kills", "3"], "exactly-once", set()),
    ("python_sink_publish_in_write", ["--seed", "2", "--kill", "sink.commit.before:1"], "violated", {"duplicate"}),
    ("kafka_file_sink", ["--seed", "3", "--kills", "2"], "exactly-once", set()),
    ("scenarios.library.kafka_file_sink:NAIVE_APPEND", ["--seed", "3", "--kill", "sink.commit.after:1"],
     "violated", {"duplicate"}),
    ("foreachbatch_delta_upsert", ["--seed", "1", "--kills", "2"], "exactly-once", set()),
    ("foreachbatch_delta_naive", ["--seed", "1", "--kill", "sink.commit.after:1"], "violated", {"duplicate"}),
    ("dstream_foreach", ["--seed", "7", "--kills", "3"], "exactly-once", set()),
    ("dstream_foreach_naive", ["--seed", "1", "--kills", "3"], "violated", {"duplicate"}),
    ("file_sink_stateless", ["--seed", "4", "--kill", "batch.time:1:300"], "exactly-once", set()),
    # At-least-once as documented: a graceful stop re-writes the epoch in progress (docs/triggers.md).
    ("rate_continuous", ["--seed", "3", "--kills", "0", "--kill", "batch.time:3:400", "--kill", "batch.time:9:300"],
     "violated", {"duplicate"}),
]  # fmt: skip

RESULTS = Path(os.environ.get("HARNESS_LOAD_RESULTS", ".harness/load-results.jsonl"))
SESSION = uuid.uuid4().hex[:8]
#: Words of a no-verdict report that names a step of the harness's own (not a refusal of bad input).
HARNESS_STEPS = ("the harness", "watchdog", "no answer within", "did not catch up", "timed out", "timeout")


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)


#: A busy loop that ends when the test process that started it is gone (a cancelled CI job leaves none behind).
BUSY = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass\n"


def _busy(n: int) -> Iterator[int]:
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(n):
            procs.append(subprocess.Popen([sys.executable, "-c", BUSY]))
        yield n
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


@pytest.fixture
def busy() -> Iterator[int]:
    """Two busy processes per core, for the duration of the test."""
    yield from _busy(2 * _cores())


@pytest.fixture
def two_busy_loops() -> Iterator[int]:
    """Two busy loops beside the run (the DStream acceptance of the issue)."""
    yield from _busy(2)


def _idle_label() -> str:
    """``idle``, or ``pytest -n N`` when xdist runs two cases at once."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    return f"pytest -n {workers}" if workers else "idle"


def _record(scenario: str, args: list[str], load: str, got: dict[str, Any], outcome: str) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    entry = {"session": SESSION, "scenario": scenario, "args": args, "load": load, "outcome": outcome, **got}
    with RESULTS.open("a") as f:
        f.write(json.dumps(entry) + "\n")


def _run(scenario: str, args: list[str], tmp_path: Path) -> dict[str, Any]:
    report = tmp_path / "r.json"
    rc, _out, err = harness("run", scenario, *args, "--json", str(report), timeout=1800)
    doc = json.loads(report.read_text()) if report.exists() else {}
    lines = [line for line in err.strip().splitlines() if line.strip()]
    error = str(doc.get("error") or (lines[-1] if lines else ""))
    return {
        "rc": rc,
        "report": bool(doc),
        "verdict": doc.get("verdict", "unknown"),
        "kinds": sorted(doc.get("anomaly_counts", {})),
        "planned": len(doc.get("kills_planned") or []),
        "fired": len(doc.get("kills_fired", [])),
        "error": error.splitlines()[0][:300] if rc == 2 and error else "",
        "leftovers": leftover_processes(),
    }


def _judge(case: Case, got: dict[str, Any], load: str) -> None:
    scenario, args, verdict, kinds = case
    missed = got["verdict"] == "unknown" and got["report"] and any(w in got["error"] for w in HARNESS_STEPS)
    outcome = "no verdict" if missed and load != "idle" else ("as expected" if got["verdict"] == verdict else "wrong")
    _record(scenario, args, load, got, outcome)
    assert got["leftovers"] == [], got
    if outcome == "no verdict":  # counted and listed by pytest's summary, with the step the harness missed
        pytest.xfail(f"no verdict under {load}: {got['error']}")
    assert (got["verdict"], set(got["kinds"])) == (verdict, kinds), got
    assert got["rc"] == (0 if verdict == "exactly-once" else 1), got
    assert got["fired"] == got["planned"], got


def _case_id(case: Case) -> str:
    scenario, args = case[0], case[1]
    name = scenario.replace("scenarios.library.", "").replace(":", "-")
    return f"{name}-seed{args[1]}-" + "-".join(a.lstrip("-") for a in args[2:])


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_idle(case: Case, tmp_path: Path) -> None:
    _judge(case, _run(case[0], case[1], tmp_path), _idle_label())


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_under_cpu_pressure(case: Case, tmp_path: Path, busy: int) -> None:
    _judge(case, _run(case[0], case[1], tmp_path), f"{busy} busy processes")


DSTREAM_SEEDS = (1, 2, 3, 4, 5)


def _dstream_pair(twin: str, seed: int, tmp_path: Path, load: str) -> None:
    """``run orders_dstream:ORDERS[_BY_CLOCK] --seed S --kills 3`` from a user's project directory with the
    default run directory (its name holds the reference's ``:``): the correct twin holds, the broken one is
    caught as duplicates, every kill fired. No no-verdict is allowed here, idle or loaded (the issue's
    acceptance). Seeds 1-5 draw two kill plans between them (1-3 and 4-5), each with a ``dstream.batch.end``."""
    args = ["--seed", str(seed), "--kills", "3"]
    cli = user_harness(tmp_path / "project", "run", DSTREAM.ref(twin), *args, json_path=tmp_path / "run.json")
    got = {
        "rc": cli.code,
        "verdict": cli.doc.get("verdict", "unknown"),
        "kinds": sorted(cli.doc.get("anomaly_counts", {})),
        "error": str(cli.doc.get("error") or "")[:300],
    }
    want = "exactly-once" if twin == "correct" else "violated"
    _record(DSTREAM.ref(twin), args, load, got, "as expected" if got["verdict"] == want else "wrong")
    assert_run_verdict(cli, DSTREAM, twin, kills=3)
    assert leftover_processes() == []


@pytest.mark.parametrize("seed", DSTREAM_SEEDS)
@pytest.mark.parametrize("twin", ["correct", "broken"])
def test_user_dstream_pair_idle(twin: str, seed: int, tmp_path: Path) -> None:
    _dstream_pair(twin, seed, tmp_path, _idle_label())


@pytest.mark.parametrize("seed", DSTREAM_SEEDS)
@pytest.mark.parametrize("twin", ["correct", "broken"])
def test_user_dstream_pair_beside_two_busy_loops(twin: str, seed: int, tmp_path: Path, two_busy_loops: int) -> None:
    _dstream_pair(twin, seed, tmp_path, f"{two_busy_loops} busy loops")
