"""Volume and long runs under real SIGKILLs (issue 13 points 1 and 2).

The heavy tier runs the acceptance pair at 10^6 rows (the file sink holds under 3 kills; the naive
``foreachBatch`` append is caught with its duplicates located in the killed batch). The default suite keeps
one representative of the long runs: 40 batches of a stateful query on RocksDB into the file sink, killed in a
compaction batch of the sink's log, in state snapshot batches, as a snapshot appears and in a retention purge,
each fault named by the boundaries it hit; the heavy tier runs the same over 60 batches."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from fault_injectors.plan import FaultRule
from harness.engine.pool import DriverPool
from harness.engine.report import render_text, to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec, parse_kill_argument


def _kills(*texts: str) -> tuple[FaultRule, ...]:
    return tuple(dataclasses.replace(parse_kill_argument(t), id=f"x{i + 1}") for i, t in enumerate(texts))


def _run(pool: DriverPool, run_dir: Path, spec: RunSpec) -> tuple[dict[str, Any], str]:
    log: list[str] = []
    outcome = run_spec(spec, run_dir=run_dir, echo=log.append, pool=pool)
    return to_json(outcome), "\n".join([*log[-30:], render_text(outcome)])


#: Snapshot settings that make RocksDB's full copies land at fixed versions: with changelog checkpointing a copy
#: is taken at the commit of every 5th version and uploaded by the maintenance task, which runs every 200 ms
#: here (Spark's default 60 s leaves one upload per minute, at versions the clock decides). Measured: .zip at
#: every multiple of the interval. Versions (and offsets/commits) older than the newest ``minBatchesToRetain``
#: are purged by the same task, a snapshot interval at a time (Spark's default keeps 100: no purge here).
SNAPSHOTS = {
    "spark.sql.streaming.stateStore.maintenanceInterval": "200ms",
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "5",
}


@dataclasses.dataclass(frozen=True)
class LongRun:
    """A run of ``batches`` batches of 500 rows keeping the newest ``retain`` versions, killed mid-write in
    ``mid`` (a compaction batch of the sink's log and a snapshot batch), at the end of ``end``'s write (a
    snapshot batch), as the snapshot of version ``snapshot + 1`` appears and in the first purge after
    ``commits/<purge>``; ``kept``: snapshot versions of those batches the retention leaves at the end (a killed
    batch's rerun took its copy; the older ones are purged)."""

    batches: int
    retain: int
    mid: int
    end: int
    snapshot: int
    purge: int
    kept: frozenset[int]


#: The default suite's: 40 batches, four compactions. The first purge comes about two snapshot intervals after
#: the newest ``retain`` versions leave one out (measured: after commits/34), five batches before the end.
DEFAULT_RUN = LongRun(40, 25, 9, 14, 24, 24, frozenset({15, 25}))
#: The heavy tier's: 60 batches, six compactions, the first purge after commits/44 (measured: after 51).
LONG_RUN = LongRun(60, 40, 19, 24, 34, 44, frozenset({20, 25, 35}))


@pytest.mark.parametrize(
    "run", [pytest.param(DEFAULT_RUN, id="40"), pytest.param(LONG_RUN, id="60", marks=pytest.mark.heavy)]
)
def test_a_long_stateful_run_killed_at_its_maintenance_boundaries_holds_and_names_them(
    run: LongRun, tmp_path: Path
) -> None:
    """Rows in batches of 500 through a stateful deduplication into the file sink, on RocksDB with changelog
    checkpointing: past compactions of the sink's log (batches 9, 19, ...), state snapshots (versions 5, 10,
    ...: batches 4, 9, 14, ...) and retention purges. Four SIGKILLs:
    - mid-write in a compaction and snapshot batch and at the end of a snapshot batch's write, both before
      their commits: the rerun batch takes the copy. (A kill just after the commit may beat the upload: then
      the next copy is at the first commit after the restart and no file says the batch was a snapshot batch;
      measured.)
    - the moment ``state/0/<p>/<v>.zip`` appears (``state.snapshot``, the checkpoint watcher);
    - the moment the maintenance task deletes its first state file after ``commits/<n>`` (``state.purge``).
    Exactly-once, each fault named by its boundaries."""
    kills = _kills(f"sink.write.mid:{run.mid}", f"sink.write.end:{run.end}", f"state.snapshot:{run.snapshot}",
                   f"state.purge:{run.purge}")  # fmt: skip
    confs = {**SNAPSHOTS, "spark.sql.streaming.minBatchesToRetain": str(run.retain)}
    spec = RunSpec("dedup_stream", 2, kills=0, rounds=1, volume=500 * run.batches, batch_rows=500,
                   state_store="rocksdb-changelog", confs=confs, extra_faults=kills)  # fmt: skip
    log: list[str] = []
    outcome = run_spec(spec, run_dir=tmp_path / "run", echo=log.append)
    doc, report = to_json(outcome), render_text(outcome)
    text = "\n".join([*log[-30:], report])
    assert doc["verdict"] == "exactly-once", text
    last = run.batches - 1
    assert doc["batches"][-1]["batch_id"] == last, text
    assert run.retain <= len(doc["batches"]) < run.batches, f"retention purged the logs: {len(doc['batches'])}"
    assert len(doc["kills_fired"]) == 4, text  # the purge kill fires only if the purge comes before the end
    assert [(k["point"], k["batch"], k["boundaries"]) for k in doc["kills_fired"][:3]] == [
        ("sink.write.mid", run.mid, ["file-sink log compaction", "state snapshot"]),
        ("sink.write.end", run.end, ["state snapshot"]),
        ("state.snapshot", run.snapshot, ["state snapshot"]),
    ], text
    snapshot, purge = doc["kills_fired"][2:]
    assert snapshot["description"].endswith(".zip appeared"), snapshot
    assert f"/{run.snapshot + 1}.zip" in snapshot["description"], snapshot
    # The first purge after commits/<n> lands in a later batch (maintenance's clock).
    after = purge["context"]["after_commit"]
    assert (purge["point"], purge["boundaries"]) == ("state.purge", ["state retention purge"]), purge
    assert after >= run.purge and purge["batch"] == after + 1, purge
    assert " deleted (" in purge["description"] and f" after commits/{after}" in purge["description"], purge
    assert not spec.deterministic and "state-maintenance kill(s): NOT deterministic" in report
    assert "[state retention purge]" in report and "[state snapshot batch]" in report
    zips = {int(p.name.split(".")[0]) for p in (tmp_path / "run" / "checkpoint" / "state").rglob("*.zip")}
    assert run.kept <= zips, sorted(zips)
    assert doc["expected_rows"] == doc["observed_rows"] > 0


@pytest.mark.heavy
def test_a_1e6_row_run_through_the_file_sink_holds_under_three_kills(pool: DriverPool, tmp_path: Path) -> None:
    spec = RunSpec("file_sink_stateless", 4, kills=3, volume=1_000_000)
    doc, log = _run(pool, tmp_path / "run", spec)
    assert doc["verdict"] == "exactly-once", log
    assert len(doc["kills_fired"]) == 3, log
    assert doc["expected_rows"] == doc["observed_rows"] > 600_000


@pytest.mark.heavy
def test_a_1e6_row_naive_foreach_batch_append_is_caught(pool: DriverPool, tmp_path: Path) -> None:
    kills = _kills("sink.commit.after:1")
    spec = RunSpec("foreachbatch_append_naive", 4, kills=0, rounds=2, volume=1_000_000, extra_faults=kills)
    doc, log = _run(pool, tmp_path / "run", spec)
    assert doc["verdict"] == "violated", log
    assert {a["kind"] for a in doc["anomalies"]} == {"duplicate"}, log
    assert doc["anomaly_counts"]["duplicate"] > 100_000  # the whole replayed batch, counted where the data is
    assert {a["batch_id"] for a in doc["anomalies"]} == {1}, log  # the capped sample, located in the killed batch
