"""How certify measures one row: a sink through the harness runner, a source
through the end-to-end source runs, or (a source with a scenario of its own,
Kafka) through the runner too (see :mod:`.command` for what is measured and
why). Each function returns ``measured`` (a guarantee level, ``replayable``
/ ``not replayable``, or ``None`` when the run gave no verdict), ``note`` or
``error``, the checker's ``anomalies``, the ``kills`` that fired and the run's
``verdict``. For a versioned table sink (Delta) the note of a row with anomalies
names the table versions of the first one (the checker's ``sink_where``).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fault_injectors.actions import KILL
from fault_injectors.points import in_commit_window
from harness.conformance.certify.documented import REPLAYABLE
from harness.conformance.guarantees import NONE, from_kinds


@dataclass(frozen=True)
class Row:
    """One certify row: ``scenario`` for a sink row (runner), ``source`` for a source row (end-to-end source
    run), or ``scenario`` for a source row measured through the runner (the source feeds the file sink)."""

    key: str
    kind: str
    name: str
    kill_points: tuple[str, ...]
    scenario: str | None = None
    source: str | None = None
    needs: Callable[[], str | None] | None = None
    #: Sink rows with Python code: this many SIGKILLs after a step of that code (one batch each, drawn from a
    #: census of the run's data), besides the kills at ``kill_points``. The report lists the steps tried.
    steps: int = 0
    #: The row's runs need a Kafka broker: a certify run starts one for all such rows (``shared_broker``).
    kafka: bool = False
    #: The trigger the row's run uses (``RunSpec.trigger``); ``None``: the scenario's.
    trigger: str | None = None
    #: Explicit kills (``--kill`` texts) instead of one per ``kill_points`` entry: an epoch run's epochs are the
    #: clock's, so its kills name epochs and timed moments (``rounds`` rounds).
    kills: tuple[str, ...] = ()
    rounds: int = 2


def kafka_missing() -> str | None:
    """Why no Kafka run can start here (the set-up's jars missing or not PySpark's), else ``None``."""
    from scenarios.base import ResourceUnavailable
    from scenarios.kafka.preflight import preflight

    try:
        preflight()
    except ResourceUnavailable as exc:
        return str(exc)
    return None


def _sink_rules(scenario: str, points: Sequence[str], seed: int, batches_needed: int) -> tuple[list[Any], int]:
    """A rule per point, point *i* in batch *i*; and the rounds (2 or more) that make ``batches_needed``."""
    from harness.engine.schedule import build_schedule, rules_per_point
    from harness.engine.spec import RunSpec
    from scenarios import get_scenario

    sc = get_scenario(scenario)
    rounds = 2
    while len(build_schedule(RunSpec(scenario, seed, 0, rounds), sc).predicted_batches) < batches_needed:
        rounds += 1
    batches = build_schedule(RunSpec(scenario, seed, 0, rounds), sc).predicted_batches
    return rules_per_point(points, batches, sc.rows_per_offset, rule_id="c{n}"), rounds


def _step_rules(row: Row, seed: int, rounds: int, run_dir: Path, pool: Any) -> tuple[list[Any], list[str]]:
    """``row.steps`` SIGKILLs inside the sink's own code, one per batch after the named points' batches, each
    after a seeded effect boundary of that batch's census (a fault-free run of the same data on ``pool``); and their
    descriptions. ``CensusError`` when the census gives no verdict."""
    import random

    from harness.chaos.census import step_rules, take_census

    assert row.scenario is not None
    census_dir = run_dir.parent / f"{run_dir.name}-census"
    census = take_census(row.scenario, seed, rounds=rounds, run_dir=census_dir, pool=pool)
    rng = random.Random(seed)
    batches = [b for b in range(len(row.kill_points), len(row.kill_points) + row.steps) if census.targets(b)]
    chosen = [rng.choice(census.boundary_targets(b)) for b in batches]  # distinct kills only: effect boundaries
    rules = step_rules(lambda i: batches[i], chosen, KILL.name)
    tried = [
        f"batch {b} {w}{'' if p is None else f' partition {p}'} step {k}: {d}"
        for b, (w, p, k, d) in zip(batches, chosen, strict=True)
    ]
    return rules, tried


ATTEMPTS = 3


def late_kills(kills_fired: Sequence[dict[str, Any]]) -> list[str]:
    """Kills planned in a sink's commit window (``sink.commit.after``, reached by a watcher) that landed after
    Spark had written ``commits/N`` all the same (the ledger's ``commit_logged``): they did not test the window
    they were planned for. A timed kill or one at another point may land after the commit by design."""
    return [
        f"{k['point']}@{k['batch']}"
        for k in kills_fired
        if k.get("context", {}).get("commit_logged") and in_commit_window(k["point"])
    ]


def measure_sink(row: Row, run_dir: Path, seed: int, pool: Any, echo: Callable[[str], None]) -> dict[str, Any]:
    """:func:`measure_sink_once`, run again in a fresh ``run_dir`` (up to ``ATTEMPTS`` runs) while a kill
    landed late (:func:`late_kills`); a row whose kills all landed late is not measured."""
    import shutil

    for attempt in range(1, ATTEMPTS + 1):
        got = measure_sink_once(row, run_dir, seed, pool, echo)
        late = late_kills(got.get("fired", []))
        if not late:
            return got
        echo(f"certify {row.key}: kill {', '.join(late)} landed after commits/N was written (attempt {attempt})")
        if attempt < ATTEMPTS:
            shutil.rmtree(run_dir, ignore_errors=True)
    return got | {
        "measured": None,
        "error": f"{ATTEMPTS} attempt(s): kill {', '.join(late)} landed after commits/N every time",
    }


def measure_sink_once(row: Row, run_dir: Path, seed: int, pool: Any, echo: Callable[[str], None]) -> dict[str, Any]:
    """One runner run of the row's scenario in ``run_dir``, on the shared driver ``pool``: a kill at each of
    the row's crash points, then (``row.steps``) a kill after a step of the sink's own code per batch."""
    from harness.chaos.census import CensusError
    from harness.engine.rundir import RunPaths
    from harness.engine.runner import HarnessError, Runner
    from harness.engine.spec import RunSpec

    assert row.scenario is not None
    if row.kills:
        from harness.engine.spec import parse_kill_argument

        rules = [dataclasses.replace(parse_kill_argument(k), id=f"c{i + 1}") for i, k in enumerate(row.kills)]
        rounds = row.rounds
    else:
        rules, rounds = _sink_rules(row.scenario, row.kill_points, seed, len(row.kill_points) + row.steps)
    tried: list[str] = []
    try:
        if row.steps:
            steps, tried = _step_rules(row, seed, rounds, run_dir, pool)
            rules += steps
            echo(f"certify {row.key}: {len(steps)} kill(s) after a step of the sink's code: " + "; ".join(tried))
        spec = RunSpec(row.scenario, seed, 0, rounds, tuple(rules), trigger=row.trigger)
        outcome = Runner(spec, RunPaths(run_dir), echo, pool).execute()
    except (HarnessError, CensusError) as exc:
        return {"measured": None, "error": str(exc), "anomalies": [], "kills": 0, "verdict": "unknown"}
    result = outcome.result
    anomalies = [a.__dict__ | {"fault": None} for a in result.anomalies] if result else []
    kinds = sorted(result.counts()) if result else []
    if outcome.query_failed:
        measured: str | None = NONE
        started = any(k["point"] not in ("deploy",) for k in outcome.kills_fired)
        when = "to continue after a restart" if started else "to run"
        error = outcome.error or (outcome.failure.spark if outcome.failure else "")
        note = f"the query refused {when}: {(error or '-').splitlines()[0]}"
    elif outcome.verdict in ("exactly-once", "violated"):
        counts = result.counts() if result else {}
        measured, note = from_kinds(kinds), ", ".join(f"{n} {k}" for k, n in counts.items())
        if not counts and result is not None:
            note = f"{result.observed_rows} rows, none lost or duplicated"
        where = next((a.sink_where for a in result.anomalies if a.sink_where), None) if result else None
        if where:  # a versioned table sink (Delta): the table versions of the first anomaly's row and batch
            note += f" (e.g. {where})"
    else:
        measured, note = None, (outcome.error or "no verdict").splitlines()[0]
    return {
        "measured": measured,
        "error": None if measured else note,
        "note": note,
        "anomalies": anomalies,
        "kills": len(outcome.kills_fired),
        "verdict": outcome.verdict,
        "kill_points": [f"{k['point']}@{k['batch']}" for k in outcome.kills_fired],
        "fired": outcome.kills_fired,
        "steps_tried": tried,
    }


def measure_source_scenario(
    row: Row, run_dir: Path, seed: int, pool: Any, echo: Callable[[str], None]
) -> dict[str, Any]:
    """A source row with a scenario (the source -> the exactly-once parquet file sink): one runner run with a
    kill at each crash point, like a sink row; ``replayable`` when the output is exactly the oracle, ``not
    replayable`` when rows were lost or duplicated or the query refused to restart from its checkpoint."""
    got = measure_sink_once(row, run_dir, seed, pool, echo)
    if got["measured"] is not None:
        got["measured"] = REPLAYABLE if got["verdict"] == "exactly-once" else "not replayable"
        got["error"] = None
    return got


def source_spec(kind: str, workdir: Path) -> tuple[dict[str, Any], Callable[[int], dict[str, Any]]]:
    """The end-to-end run spec and data feeder of a built-in source."""
    if kind == "rate":

        def wait(r: int) -> dict[str, Any]:
            time.sleep(1.5)  # the rate source's data is the clock: let seconds pass
            return {"waited_s": 1.5}

        return {
            "kind": "rate",
            "format": "rate",
            "options": {"rowsPerSecond": "10", "numPartitions": "2"},
            "compare": ["value"],
        }, wait
    if kind == "rate-micro-batch":
        opts = {"rowsPerBatch": "20", "numPartitions": "2", "startTimestamp": "0", "advanceMillisPerBatch": "1000"}
        return {
            "kind": kind,
            "format": kind,
            "options": opts,
            "compare": ["timestamp", "value"],
            "identity": ["value"],
        }, lambda r: {}
    inp = workdir / "input"
    inp.mkdir(parents=True, exist_ok=True)

    def write_file(r: int) -> dict[str, Any]:
        tmp = workdir / f".r{r}.json"  # written outside the directory, then moved in atomically
        tmp.write_text("".join(json.dumps({"id": r * 1000 + i, "v": f"r{r}-{i}"}) + "\n" for i in range(20)))
        tmp.replace(inp / f"r{r}.json")
        return {"file": f"r{r}.json", "rows": 20}

    return {
        "kind": "file",
        "format": "json",
        "options": {"maxFilesPerTrigger": "1"},
        "schema": "id BIGINT, v STRING",
        "input": str(inp),
    }, write_file


def measure_source(row: Row, run_dir: Path, pool: Any, echo: Callable[[str], None]) -> dict[str, Any]:
    """One end-to-end source run of the row's source into the parquet file sink, on the shared driver ``pool``."""
    from harness.conformance.source.run import run_source

    assert row.source is not None
    spec, feed = source_spec(row.source, run_dir.parent / f"{run_dir.name}-data")
    outcome = run_source(run_dir, spec, feed, 2, row.kill_points, echo, pool=pool)
    result = outcome.result
    anomalies = [a.__dict__ | {"fault": None} for a in result.anomalies] if result else []
    if outcome.verdict == "unknown":
        return {
            "measured": None,
            "error": (outcome.error or "no verdict").splitlines()[0],
            "anomalies": anomalies,
            "kills": len(outcome.kills_fired),
            "verdict": "unknown",
        }
    assert result is not None
    counts = result.counts()
    measured = REPLAYABLE if not counts else "not replayable"
    note = ", ".join(f"{n} {k}" for k, n in counts.items()) or f"{result.observed_rows} rows, none lost or duplicated"
    return {
        "measured": measured,
        "error": None,
        "note": note,
        "anomalies": anomalies,
        "kills": len(outcome.kills_fired),
        "verdict": outcome.verdict,
        "kill_points": [f"{k['point']}@{k['batch']}" for k in outcome.kills_fired],
    }
