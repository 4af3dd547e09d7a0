"""A timed kill (``batch.time:N:MS``) on the JVM-side parquet file sink, end to end: a real SIGKILL lands
where the ledger says, the run still proves exactly-once, the report and the bundle say the run is not
deterministic, and ``replay --times`` reports how often the replays reproduced it
(one replay here, for the suite's time)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fault_injectors.plan import TIMED_POINT, FaultRule
from harness.chaos.bundle import write_bundle
from harness.engine.pool import DriverPool
from harness.engine.report import render_text, to_json
from harness.engine.runner import run_spec
from harness.engine.spec import RunSpec
from tests.integration.clirun import harness, leftover_processes

PLANNED_MS = 150


# CI time (~30 s): the default suite's timed kills are test_triggers.py's (continuous processing, two of them,
# each located by its epoch); this one's replay rate of a non-deterministic run is the heavy tier's.
@pytest.mark.heavy
def test_timed_kill_of_the_file_sink_lands_is_recorded_and_replays_with_a_rate(
    tmp_path: Path, pool: DriverPool
) -> None:
    rule = FaultRule("x1", TIMED_POINT, 1, after_ms=PLANNED_MS)
    spec = RunSpec("file_sink_stateless", 5, kills=0, rows=((50, 40),), extra_faults=(rule,))
    outcome = run_spec(spec, tmp_path / "run", echo=lambda m: None, pool=pool)
    report = to_json(outcome)
    assert outcome.error is None, outcome.error
    assert report["verdict"] == "exactly-once", render_text(outcome)  # the file sink survives a kill anywhere
    (kill,) = report["kills_fired"]
    ctx = kill["context"]
    assert (kill["point"], kill["batch"], ctx["via"], ctx["planned_ms"]) == (TIMED_POINT, 1, "timer", PLANNED_MS)
    # The kill is fired by a 5 ms poll in a driver that runs Spark on 2 busy cores: it lands at or after
    # the planned moment, and the ledger says by how much.
    assert PLANNED_MS <= ctx["measured_ms"] < PLANNED_MS + 500, ctx
    assert ctx["offsets_logged"] and f"landed {round(ctx['measured_ms'])} ms after offsets/1" in kill["description"]
    assert report["deterministic"] is False
    text = render_text(outcome)
    assert "kill 150 ms into batch 1 (timed, not deterministic): landed" in text
    assert "timed kill(s): NOT deterministic" in text
    assert "--kill batch.time:1:150" in text

    bundle = write_bundle(outcome, tmp_path / "bundle", report)
    recorded = json.loads((bundle / "bundle.json").read_text())
    assert recorded["deterministic"] is False
    assert recorded["timed_kills"] == [
        {"id": "x1", "batch": 1, "planned_ms": PLANNED_MS, "measured_ms": ctx["measured_ms"]}
    ]
    rc, out, err = harness("replay", str(bundle), "--times", "1")
    assert "not deterministic, a replay lands a few ms elsewhere" in err, err[-2000:]
    assert f"x1 planned {PLANNED_MS} ms, landed {ctx['measured_ms']} ms" in err
    replays = [line for line in out.splitlines() if line.startswith("replay ")]
    assert len(replays) == 1 and "[x1 landed " in replays[0], out
    # The file sink is exactly-once wherever the kill lands, so the replay reproduces the recorded verdict.
    assert "reproduced 1/1 time(s) (timed kill: not deterministic, a rate below 1/1 is expected)" in out, out
    assert rc == 0, out + err[-2000:]
    assert leftover_processes() == []
