"""fault_injectors/autowrap.py: which sinks the harness wraps for the user, the writer it wraps a ``foreach``
writer in (no Spark: a writer's calls made by hand), and safe run-directory names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fault_injectors.autowrap import CrashInjectingForeachWriter, is_instrumented, registers_unwrapped_sink
from fault_injectors.crash import FaultSite
from fault_injectors.sinks import crash_injecting_foreach_batch
from harness.engine.rundir import safe_name
from scenarios import SinkContext, get_scenario


def _ctx(tmp_path: Path) -> SinkContext:
    return SinkContext(str(tmp_path / "out"), str(tmp_path / "cp"), FaultSite(None))


class Writer:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def open(self, partition_id: int, epoch_id: int) -> Any:
        self.calls.append(("open", partition_id, epoch_id))
        return None  # falsy: Spark then skips the partition, and so must the wrapper

    def process(self, row: Any) -> None:
        self.calls.append(("process", row))

    def close(self, error: BaseException | None) -> None:
        self.calls.append(("close", error))


def test_an_unwrapped_foreach_batch_or_foreach_writer_is_found(tmp_path: Path) -> None:
    def fn(df: Any, batch_id: int) -> None: ...

    assert registers_unwrapped_sink(lambda w, ctx: w.outputMode("update").foreachBatch(fn), _ctx(tmp_path))
    assert registers_unwrapped_sink(lambda w, ctx: w.foreach(Writer()).option("x", "y"), _ctx(tmp_path))
    assert registers_unwrapped_sink(lambda w, ctx: w.foreach(lambda row: None), _ctx(tmp_path))


def test_a_hand_wrapped_function_a_file_sink_or_a_failing_attach_sink_is_not(tmp_path: Path) -> None:
    def fn(df: Any, batch_id: int) -> None: ...

    wrapped = crash_injecting_foreach_batch(fn, FaultSite(None))
    assert is_instrumented(wrapped) and not is_instrumented(fn)
    assert not registers_unwrapped_sink(lambda w, ctx: w.foreachBatch(wrapped), _ctx(tmp_path))
    assert not registers_unwrapped_sink(lambda w, ctx: w.format("parquet").option("path", ctx.output), _ctx(tmp_path))
    assert not registers_unwrapped_sink(lambda w, ctx: w.foreach(object()), _ctx(tmp_path))  # Spark refuses it

    def needs_a_real_writer(w: Any, ctx: SinkContext) -> Any:
        raise RuntimeError("no")

    assert not registers_unwrapped_sink(needs_a_real_writer, _ctx(tmp_path))


def test_the_scenario_decides_by_the_probe_unless_it_says(tmp_path: Path) -> None:
    import dataclasses

    plain = get_scenario("examples.pipelines.plain_sinks:APPEND")
    assert plain.sink_steps is None and plain.draws_sink_steps
    assert not dataclasses.replace(plain, sink_steps=False).draws_sink_steps
    assert not get_scenario("file_sink_stateless").draws_sink_steps
    # The library's foreach writer fires the points itself: it is not wrapped again, and draws no steps.
    assert not get_scenario("kafka_foreach").draws_sink_steps


def test_the_foreach_wrapper_passes_every_call_and_opens_value_through() -> None:
    inner = Writer()
    writer = CrashInjectingForeachWriter(inner, "", "")
    assert writer.open(3, 7) is None
    writer.process({"a": 1})
    writer.close(None)
    assert inner.calls == [("open", 3, 7), ("process", {"a": 1}), ("close", None)]


def test_the_foreach_wrapper_of_a_function_calls_it_per_row_and_opens_true() -> None:
    rows: list[Any] = []
    writer = CrashInjectingForeachWriter(rows.append, "", "")
    assert writer.open(0, 1) is True  # Spark's default for a writer without open
    writer.process("r1")
    writer.process("r2")
    writer.close(None)
    assert rows == ["r1", "r2"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("module.sub:ATTR", "module.sub-ATTR"), ("a b/c", "a-b-c"), ("file_sink_stateless", "file_sink_stateless")],
)
def test_a_scenario_reference_becomes_a_path_component_spark_takes(text: str, expected: str) -> None:
    assert safe_name(text) == expected
