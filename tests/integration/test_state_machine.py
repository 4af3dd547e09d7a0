"""The stateful chaos machine against a live query in the shared session."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test
from pyspark.sql import SparkSession

from harness.chaos.statemachine import chaos_state_machine


def test_file_sink_keeps_every_invariant_under_random_steps(spark: SparkSession) -> None:
    machine = chaos_state_machine("file_sink_stateless", spark, seed=5)
    run_state_machine_as_test(
        machine, settings=settings(max_examples=3, stateful_step_count=6, deadline=None, database=None)
    )


def test_naive_sink_breaks_the_no_row_twice_invariant(spark: SparkSession) -> None:
    machine = chaos_state_machine("foreachbatch_append_naive", spark, seed=5)()
    try:
        machine.add_data([12, 9])
        machine.arm_fault("sink.commit.after", 0)
        machine.run()  # batch 0 is appended, then the injected fault fails the query before commits/0
        assert machine.failed_queries == 1
        machine.offsets_never_move_backwards()
        machine.run()  # Spark re-runs batch 0: the naive sink appends it again
        with pytest.raises(AssertionError, match="visible more than once"):
            machine.output_never_shrinks_and_no_row_twice()
    finally:
        machine.teardown()
