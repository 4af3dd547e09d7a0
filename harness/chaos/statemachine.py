"""A Hypothesis ``RuleBasedStateMachine`` that drives a live query step by step.

Rules add data, run the query until it catches up, and arm a soft fault
(an injected exception at a crash point of the next batch; the query fails
and is restarted by the next run, in the same SparkSession). After every
step the invariants are checked against the real checkpoint and the real
sink output:

- offsets never move backwards (the checkpoint inspector finds no
  ``offset-regression``);
- in append mode, the committed output never shrinks;
- no row is visible twice (by the scenario's identity columns); an
  at-least-once sink is expected to break this one.

A failing run is shrunk and printed by Hypothesis as a replayable program.
Use :func:`chaos_state_machine` to build the class for a scenario and a
session, then ``run_state_machine_as_test`` (or ``Machine.TestCase``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from fault_injectors.actions import RAISE
from fault_injectors.plan import FaultPlan, FaultRule
from harness.engine.driver import Driver, QueryFailed
from harness.engine.rundir import RunPaths
from harness.engine.spec import RunSpec
from harness.inspector import inspect_checkpoint, latest_batch_id
from harness.spark.session import reader_session
from scenarios import get_scenario
from scenarios.tap import advance, init_tap

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Points where an injected exception is meaningful in process (it fails the query, which the next run restarts).
SOFT_POINTS = (
    "after_offsets_logged",
    "sink.write.start",
    "sink.write.mid",
    "sink.write.end",
    "sink.commit.before",
    "sink.commit.after",
)


def chaos_state_machine(scenario_ref: str, spark: SparkSession, seed: int = 0) -> type[RuleBasedStateMachine]:
    """A state machine class for ``scenario_ref`` running in ``spark``."""
    scenario = get_scenario(scenario_ref)
    points = [p for p in scenario.kill_points if p in SOFT_POINTS and p not in scenario.kill_only_points]
    parts = scenario.partitions

    class ChaosMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.root = Path(tempfile.mkdtemp(prefix="harness-sm-"))
            self.paths = RunPaths(self.root)
            self.paths.create()
            RunSpec(scenario_ref, seed, kills=0).save(self.paths.spec)
            self.fault_rules: list[FaultRule] = []
            FaultPlan().save(self.paths.faults / "plan.json")
            init_tap(self.paths.tap, parts)
            self.driver = Driver(self.paths, 1, spark=spark)
            self.visible = 0
            self.failed_queries = 0

        @rule(rows=st.lists(st.integers(0, 40), min_size=parts, max_size=parts))
        def add_data(self, rows: list[int]) -> None:
            advance(self.paths.tap, dict(enumerate(rows)))

        @rule()
        def run(self) -> None:
            try:
                self.driver.run()
            except QueryFailed:
                self.failed_queries += 1  # an armed fault fired; the next run restarts from the checkpoint

        if points:

            @rule(point=st.sampled_from(points), ahead=st.integers(0, 1))
            def arm_fault(self, point: str, ahead: int) -> None:
                latest = latest_batch_id(self.paths.checkpoint)
                batch = (latest + 1 if latest is not None else 0) + ahead
                self.fault_rules.append(FaultRule(f"sm{len(self.fault_rules) + 1}", point, batch, action=RAISE.name))
                FaultPlan(tuple(self.fault_rules)).save(self.paths.faults / "plan.json")
                self.driver = Driver(self.paths, 1, spark=spark)  # re-read the plan

        def _visible_rows(self) -> list[tuple[object, ...]]:
            empty = scenario.source.batch(spark, self.driver.source_run).limit(0)
            schema = scenario.transform(empty).schema
            df = scenario.read_output(reader_session(spark), self.driver.ctx, schema)
            return [tuple(r) for r in df.select(*scenario.identity).collect()]

        @invariant()
        def offsets_never_move_backwards(self) -> None:
            if not (self.paths.checkpoint / "offsets").exists():
                return
            report = inspect_checkpoint(self.paths.checkpoint, verify_checksums=False)
            regressions = [f.line() for f in report.violations if f.id == "offset-regression"]
            assert not regressions, regressions

        @invariant()
        def output_never_shrinks_and_no_row_twice(self) -> None:
            if not Path(self.driver.ctx.output).exists():
                return
            rows = self._visible_rows()
            assert len(rows) >= self.visible, f"visible output shrank from {self.visible} to {len(rows)} rows"
            self.visible = len(rows)
            twice = [r for r, n in Counter(rows).items() if n > 1]
            assert not twice, f"{len(twice)} row(s) visible more than once, e.g. {twice[:3]}"

        def teardown(self) -> None:
            shutil.rmtree(self.root, ignore_errors=True)

    ChaosMachine.__name__ = ChaosMachine.__qualname__ = f"ChaosMachine_{scenario.name}"
    return ChaosMachine
