"""The sink under test as a harness scenario, so the runner can crash it.

The runner and every child driver look scenarios up by import path
(``harness.conformance.sink.scenario:SINK_UNDER_TEST``); this module builds
that scenario on first access from the JSON in the environment variable
``HARNESS_CONFORMANCE_SINK`` (set by :func:`exported` before the runner
starts, inherited by the drivers). The pipeline is the replayable source's
integer columns (``partition, offset, seq, key, value``) into the user's sink:
a ``DataSourceStreamWriter`` wrapped in the ``crash_injecting`` format, or a
``foreachBatch`` function wrapped by ``crash_injecting_foreach_batch``. What
the sink made visible is what the user's read-back function returns for the
sink's ``path``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.conformance.sink.task_sim import COLUMNS
from harness.sources.loading import Ref
from scenarios.base import Scenario, SinkContext
from scenarios.library.python_sink_transactional import PYTHON_SINK_POINTS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming.readwriter import DataStreamWriter
    from pyspark.sql.types import StructType

ENV = "HARNESS_CONFORMANCE_SINK"
NAME = "SINK_UNDER_TEST"
REF = f"{__name__}:{NAME}"
#: Every crash point a Python sink (either kind) fed by the replayable source reaches.
SINK_POINTS = PYTHON_SINK_POINTS


@contextmanager
def exported(config: Mapping[str, Any]) -> Iterator[str]:
    """Set ``HARNESS_CONFORMANCE_SINK`` for the duration (drivers inherit it); yields the scenario reference.
    ``config``: ``kind`` (``datasource`` | ``foreach_batch``), ``target`` and ``read_back`` (``module:attr``),
    ``options``, ``guarantee``."""
    old = os.environ.get(ENV)
    os.environ[ENV] = json.dumps(dict(config))
    try:
        yield REF
    finally:
        if old is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = old


def sink_config(
    target: Any, target_ref: Ref, read_back_ref: Ref, options: Mapping[str, str], guarantee: str = "exactly-once"
) -> dict[str, Any]:
    """The scenario config of a sink under test (what :func:`exported` takes); makes the sink importable
    in this process and every child. ``TypeError`` when ``target`` is neither kind of sink."""
    from pyspark.sql.datasource import DataSource

    from harness.sources.loading import add_import_root

    if isinstance(target, type) and issubclass(target, DataSource):
        kind = "datasource"
    elif callable(target):
        kind = "foreach_batch"
    else:
        raise TypeError(f"{target!r} is neither a DataSource subclass nor a foreachBatch factory")
    for ref in (target_ref, read_back_ref):
        add_import_root(ref.root)
    return {
        "kind": kind,
        "target": target_ref.spec,
        "read_back": read_back_ref.spec,
        "options": dict(options),
        "guarantee": guarantee,
    }


def sink_path(ctx: SinkContext) -> str:
    return str(Path(ctx.output) / "sink")


def scenario_for(
    target: Any,
    read_back: Callable[[str], Iterable[Mapping[str, Any]]],
    options: Mapping[str, str] | None = None,
    guarantee: str = "exactly-once",
    name: str = "sink_under_test",
) -> Scenario:
    """A scenario feeding the replayable source's integer columns into ``target`` (a ``DataSource`` subclass
    with a stream writer, or a ``foreachBatch`` factory ``factory(path, **options)``), read back with
    ``read_back(path)``. Assign it to a module attribute and every command takes it by import path
    (``python -m harness chaos package.module:SCENARIO``); ``sink.step`` faults are drawn in its code.
    Both callables must live in an importable module (not ``__main__``): Spark's processes import them."""
    from harness.sources.loading import ref_of

    config = sink_config(target, ref_of(target), ref_of(read_back), options or {}, guarantee)
    return build(config, name=name, read_back=read_back)


def build(
    config: Mapping[str, Any],
    name: str = "sink_under_test",
    read_back: Callable[[str], Iterable[Mapping[str, Any]]] | None = None,
) -> Scenario:
    """The scenario of a sink config (:func:`sink_config`); ``read_back`` is loaded from the config unless given."""
    from harness.sources.loading import load

    kind, options = config["kind"], dict(config.get("options") or {})
    if read_back is None:
        read_back = load(config["read_back"], "read-back function")[0]

    def transform(df: DataFrame) -> DataFrame:
        return df.select(*COLUMNS)

    def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
        if kind == "datasource":
            from scenarios.library.python_sink_transactional import crash_injecting_sink

            return crash_injecting_sink(writer, ctx, config["target"]).options(**options).option("path", sink_path(ctx))
        from fault_injectors.sinks import crash_injecting_foreach_batch

        factory = load(config["target"], "foreachBatch factory")[0]
        return writer.foreachBatch(crash_injecting_foreach_batch(factory(sink_path(ctx), **options), ctx.faults))

    def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
        rows = [tuple(r.get(c) for c in schema.names) for r in read_back(sink_path(ctx))]
        return spark.createDataFrame(rows, schema)

    # A wrapped DataSourceStreamWriter fires sink.write.* inside its own write() (where a sink that publishes
    # early is caught), not in the source's read(); older Scenario versions lack the switch.
    extra: dict[str, Any] = (
        {"source_write_points": False} if kind == "datasource" and hasattr(Scenario, "source_write_points") else {}
    )
    return Scenario(
        name=name,
        summary=f"replayable source -> {config['target']} (declared {config.get('guarantee', 'exactly-once')})",
        guarantee=config.get("guarantee", "exactly-once"),
        kill_points=SINK_POINTS,
        sink_steps=True,
        transform=transform,
        attach_sink=attach_sink,
        read_output=read_output,
        max_rows_per_batch=20,
        rows_per_round=(30, 50),
        **extra,
    )


def __getattr__(name: str) -> Scenario:
    if name != NAME:
        raise AttributeError(name)
    raw = os.environ.get(ENV)
    if not raw:
        raise AttributeError(f"{NAME}: environment variable {ENV} is not set (use sink.scenario.exported)")
    return build(json.loads(raw))
