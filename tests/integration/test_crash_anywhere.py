"""Crash anywhere: faults after a step of the user's own sink code, run like a user runs them.

- A ``foreachBatch`` function with a window between its two transactions passes the named crash points and
  fails ``crash-anywhere``, which names the step; its twin one bug away (rows keyed) passes. Kills go to the
  effect boundaries only: 12 of the 15 steps, 3 of them in the window.
- The same bug after a 200-row batch read field by field (over a thousand ``Row`` reads): still 12 boundaries,
  and ``--steps 10`` finds the window for every seed (ten seeds, in the heavy tier).
- A ``DataSourceStreamWriter`` that publishes its staged files one rename at a time fails in ``commit``.
- ``run --kill sink.step:...`` SIGKILLs after a step (the report names it), the reference SQLite upsert stays
  exactly-once, and a step that never comes fails the run with exit 2.
- ``census`` prints the steps.

Soft faults (an exception after the step) keep these cheap; ``sink.step`` SIGKILLs run in the ``run`` test and in
``docs/fault-injection.md``'s measured figures. Every ``crash-anywhere`` run also checks that each fault's step, as
described where it fired (a new driver process after every restart), is the census's step of that number.
"""

from __future__ import annotations

from pathlib import Path

import pyspark
import pytest

from harness.chaos.bundle import load_bundle
from tests.integration import clirun
from tests.integration.clirun import ROOT, assert_renders, harness, harness_json, leftover_processes

EX = "examples/connectors"
#: The Spark-free protocol checks: tested in test_conformance_cli.py and the unit tests; skipped here (a JVM each).
PROTOCOL = ["write-invisible-until-commit", "idempotent-commit", "keys-on-batch-id", "abort-cleans-up", "task-retry"]


def by_id(doc: dict) -> dict[str, dict]:
    return {c["id"]: c for c in doc["checks"]}


def line_of(path: str, marker: str) -> int:
    """The 1-based line of ``path`` holding ``marker`` (so the tests do not hard-code line numbers)."""
    lines = (ROOT / path).read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if marker in text)


@pytest.mark.parametrize(
    ("factory", "rc"),
    [
        # The default suite's crash-anywhere cases are test_kill_python.py's (a correct two-transaction sink
        # passes, an unkeyed one loses what a driver's death loses); this pair and the chaos test are heavy.
        pytest.param("two_txn_sink", 1, marks=pytest.mark.heavy),
        pytest.param("keyed_two_txn_sink", 0, marks=pytest.mark.heavy),  # CI time
    ],
    ids=["two-transactions", "keyed-twin"],
)
def test_window_between_two_transactions(tmp_path: Path, factory: str, rc: int) -> None:
    code = f"{EX}/two_txn_foreach_batch.py"
    # the named points around the function, for the broken one only: they cannot see the window
    skip = [*PROTOCOL, *([] if rc else ["crash-points"])]
    rc_, doc, log = harness_json(
        tmp_path / "r.json",
        "check-sink",
        f"{code}:{factory}",
        "--read-back",
        f"{code}:read_back",
        "--faults",
        "soft",
        "--points",
        "sink.commit.before,sink.commit.after",
        "--skip",
        ",".join(skip),
        "--steps",
        "all",  # its 12 effect boundaries (of 15 steps): the window's 3 and the batch id's COMMIT among them
    )
    assert rc_ == rc, log
    checks = by_id(doc)
    assert checks["crash-points"]["status"] == ("pass" if rc else "skip"), log
    anywhere = checks["crash-anywhere"]
    tried = doc["steps"]["steps_tried"]
    assert len(tried) == 12 and doc["steps"]["census_steps"] == 15 and doc["steps"]["boundaries"] == 12, doc["steps"]
    commit_rows = f"two_txn_foreach_batch.py:{line_of(code, '# the rows are visible')} write_batch -> "
    assert any(commit_rows + "sqlite3.Connection.execute" in t for t in tried), tried
    if rc == 0:
        assert anywhere["status"] == "pass" and anywhere["observed"] == [], log
        return
    assert anywhere["status"] == "fail" and anywhere["observed"] == ["duplicate"], log
    # the first culprit is the step that committed the rows; after the batch id's COMMIT nothing is duplicated
    assert commit_rows + "sqlite3.Connection.execute: " in anywhere["details"][0], anywhere["details"]
    assert "duplicate" in anywhere["details"][0] and commit_rows in anywhere["summary"]
    id_commit = f"two_txn_foreach_batch.py:{line_of(code, '# ... and only now')} write_batch -> "
    assert any(id_commit in d and d.endswith("nothing lost or duplicated") for d in anywhere["details"]), anywhere
    assert doc["guarantee"]["measured"] == "at-least-once"
    assert leftover_processes() == []


@pytest.mark.parametrize(
    "seed",
    [pytest.param(s, id=f"seed-{s}", marks=pytest.mark.heavy) for s in range(5, 15)],
)
def test_two_transactions_after_a_200_row_batch_are_found_at_an_effect_boundary(tmp_path: Path, seed: int) -> None:
    """Issue 25.3: a 200-row batch read field by field takes over a thousand steps, nearly all Row reads; the
    kills go to its 12 effect boundaries, and a budget of 10 finds the window between the two commits for every
    seed (the heavy tier runs ten). The report says how many steps and boundaries the batch had, and how many
    were tried."""
    code = f"{EX}/two_txn_row_fields.py"
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "check-sink",
        f"{code}:two_txn_row_fields_sink",
        "--read-back",
        f"{code}:read_back",
        "--faults",
        "soft",
        "--skip",
        ",".join([*PROTOCOL, "crash-points"]),
        "--batch-rows",
        "200",
        "--steps",
        "10",
        "--seed",
        str(seed),
    )
    assert rc == 1, log
    steps = doc["steps"]
    assert steps["census_steps"] > 1000 and steps["boundaries"] == 12 and len(steps["steps_tried"]) == 10, steps
    assert steps["batch_rows"] == 200 and not any("Row.__getitem__" in t for t in steps["boundary_steps"]), steps
    anywhere = by_id(doc)["crash-anywhere"]
    assert anywhere["status"] == "fail" and anywhere["observed"] == ["duplicate"], log
    # the first culprit is a step of the window: the rows' COMMIT, or the second transaction's BEGIN or INSERT
    first = line_of(code, "# the rows are visible")
    window = [
        f"two_txn_row_fields.py:{n} write_batch -> sqlite3.Connection.execute" for n in (first, first + 2, first + 3)
    ]
    assert any(w in anywhere["summary"] for w in window) and "duplicate" in anywhere["details"][0], anywhere
    assert f"{steps['census_steps']} step(s), 12 effect boundary(ies) of batch 1: 10 tried" in anywhere["summary"]
    assert leftover_processes() == []


@pytest.mark.heavy  # CI time: crash-anywhere's default cases are test_kill_python.py's
def test_commit_publishing_one_rename_at_a_time(tmp_path: Path) -> None:
    code = f"{EX}/rename_one_by_one_sink.py"
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "check-sink",
        f"{code}:RenameOneByOneSink",
        "--read-back",
        f"{code}:read_back",
        "--skip",
        ",".join([*PROTOCOL, "crash-points"]),
        "--faults",
        "soft",
        "--wrappers",
        "commit",
        "--steps",
        "all",
    )
    assert rc == 1, log
    anywhere = by_id(doc)["crash-anywhere"]
    assert anywhere["status"] == "fail" and anywhere["observed"] == ["duplicate"], log
    rename = f"rename_one_by_one_sink.py:{line_of(code, '# BUG: visible one by one')} commit -> os.replace: "
    assert anywhere["details"][0].startswith("raise after step ") and rename in anywhere["details"][0], anywhere
    assert all(t.startswith("commit step ") for t in doc["steps"]["steps_tried"])


def test_run_kills_after_a_step_and_a_step_that_never_comes_exits_2(tmp_path: Path) -> None:
    """A SIGKILL after the reference upsert's rows were read, before its transaction commits: exactly-once;
    a second rule aims at step 9999, which no call takes: no verdict (exit 2), naming the rule."""
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "run",
        "foreachbatch_sqlite_upsert",
        "--seed",
        "3",
        "--rounds",
        "1",
        "--kill",
        "sink.step:0:20",
        "--kill",
        "sink.step:1:9999",
    )
    assert rc == 2, log
    (fired,) = doc["kills_fired"]
    assert fired["description"].startswith("x1: kill after step 20 of batch 0: "), fired
    assert " -> " in fired["description"] and ".py:" in fired["description"]
    assert "fault x2 planned (kill after step 9999 of batch 1) never fired" in doc["error"], doc["error"]
    assert log.splitlines()[0].startswith("harness error, no verdict"), log
    assert doc["anomaly_counts"] == {} and doc["expected_rows"] == doc["observed_rows"] > 0, log
    assert "--kill sink.step:0:20 --kill sink.step:1:9999" in doc["replay"]
    assert leftover_processes() == []


def test_census_prints_the_steps() -> None:
    before = set(clirun.CHILD_TMPDIR.iterdir()) if clirun.CHILD_TMPDIR else set()
    rc, out, err = harness("census", "foreachbatch_sqlite_upsert", "--seed", "3")
    assert rc == 0, err[-3000:]
    if clirun.CHILD_TMPDIR:  # the census run's temp directory is gone once the census is printed
        assert not [p for p in set(clirun.CHILD_TMPDIR.iterdir()) - before if p.name.startswith("harness-census")]
    lines = out.splitlines()
    assert lines[0] == "census of foreachbatch_sqlite_upsert (seed 3): steps of the sink's own code per call"
    heads = [line for line in lines if line.startswith("batch ")]
    assert heads and all(", foreach_batch: " in h for h in heads), out
    assert any("sqlite_upsert.py:" in line and "-> sqlite3.Connection.execute" in line for line in lines), out
    assert "replay: .venv/bin/python -m harness census foreachbatch_sqlite_upsert --seed 3" in err


# heavy: crash anywhere by `run --kill sink.step` stays (test_run_kills_after_a_step_...); chaos shrinking and
# bundle replay: test_xdist_suite.py, test_pytest_failure_report.py
@pytest.mark.heavy
def test_chaos_finds_the_two_transaction_window_shrinks_to_one_step_and_replays(tmp_path: Path) -> None:
    """chaos over the broken sink's SCENARIO (20 examples at most; seed 16 meets the window at example 3, and
    36 of 40 seeds within 20: docs/fault-injection.md) ends with one sink.step fault in the window, whose
    bundle replays with the same anomalies 3 times out of 3."""
    scenario = "examples.connectors.two_txn_foreach_batch:SCENARIO"
    work = tmp_path / "campaign"
    args = ("chaos", scenario, "--examples", "20", "--seed", "16", "--profile", "ci", "--work-dir", str(work))
    rc, doc, log = harness_json(tmp_path / "chaos.json", *args)
    assert rc == 1 and doc["verdict"] == "violated", log
    (fault,) = doc["minimal_faults"]
    step = int(fault.split("after step ")[1].split()[0])
    window = line_of(f"{EX}/two_txn_foreach_batch.py", "# the rows are visible from here on")
    assert fault.startswith("raise after step ") and fault.endswith(" in foreach_batch"), fault
    assert 10 <= step <= 13, f"{fault}: not in the window after the rows' COMMIT (line {window})"
    assert set(doc["failure"]["anomaly_counts"]) == {"duplicate"}, doc["failure"]["anomaly_counts"]
    assert "step censuses" in log and "sink.step x" in log, log
    _spec, recorded = load_bundle(Path(doc["bundle"]))
    assert (
        recorded["versions"]["pyspark"] == pyspark.__version__ and recorded["spec"]["extra_faults"][0]["step"] == step
    )
    rc, out, err = harness("replay", doc["bundle"], "--times", "3", "--html", str(tmp_path / "replay.html"))
    assert rc == 1 and "reproduced 3/3 time(s)" in out, out + err[-2000:]
    assert leftover_processes() == []
    # Both timelines: the bundle's own (timeline.html, named in the campaign's report) and the last replay's.
    bundle_page = Path(doc["bundle"]) / "timeline.html"
    assert f"timeline: {bundle_page}" in log
    for page in (bundle_page, tmp_path / "replay.html"):
        assert_renders(page, tmp_path, "duplicate", "fault #", "replay: ")
