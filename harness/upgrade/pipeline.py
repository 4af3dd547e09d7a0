"""The new version ``upgrade-check`` resumes: a harness ``Scenario`` or a user's query builder, by reference.

``NEW`` is a library scenario's name, or ``path/to/file.py:NAME`` / ``package.module:NAME`` naming a ``Scenario``
or a function ``(spark) -> streaming DataFrame`` (production's query up to ``writeStream``, reading production's
source). A scenario's source is the harness's, so a scenario needs the harness run directory the checkpoint
lies in (``spec.json``, ``tap.json``): its input. Errors are :class:`PipelineError`, one line saying what to give.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.upgrade.probe import StreamFn

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class PipelineError(ValueError):
    """The new pipeline cannot be loaded or fed; the message says why and what to give."""


@dataclass(frozen=True)
class NewPipeline:
    """``stream`` builds the new version's query; ``confs`` are the confs it sets explicitly; ``name`` for reports."""

    name: str
    stream: StreamFn
    confs: dict[str, str]


def load_pipeline(ref: str, checkpoint: Path, work: Path) -> NewPipeline:
    """The pipeline ``ref`` names, wired to ``checkpoint``'s input (see the module docstring)."""
    from harness.sources.loading import LoadError, load
    from scenarios import Scenario, get_scenario

    obj: Any
    if ":" not in ref:
        try:
            obj = get_scenario(ref)
        except KeyError as exc:
            raise PipelineError(str(exc.args[0])) from None
    else:
        try:
            obj, _ = load(ref, "pipeline")
        except LoadError as exc:
            raise PipelineError(str(exc)) from None
    if isinstance(obj, Scenario):
        return NewPipeline(obj.name, _scenario_stream(obj, checkpoint, work), dict(obj.confs))
    if callable(obj):
        return NewPipeline(ref, lambda spark, _copy: obj(spark), {})
    raise PipelineError(
        f"{ref} is a {type(obj).__name__}: give a Scenario or a function (spark) -> streaming DataFrame"
    )


def _scenario_stream(scenario: Any, checkpoint: Path, work: Path) -> StreamFn:
    from harness.engine.spec import RunSpec
    from harness.spark.session import apply_run_confs
    from scenarios.sources import SourceRun

    run_dir = checkpoint.resolve().parent
    if not (run_dir / "spec.json").is_file() or not (run_dir / "tap.json").is_file():
        raise PipelineError(
            f"scenario {scenario.name} reads the harness's own input, and {run_dir} is not a harness run directory "
            "(no spec.json / tap.json beside the checkpoint); for a production checkpoint give a function "
            "(spark) -> streaming DataFrame that reads production's source"
        )
    spec = RunSpec.load(run_dir / "spec.json")
    resources = run_dir / "resources.json"
    (work / "faults").mkdir(parents=True, exist_ok=True)  # an empty fault plan: nothing fires in a probe

    def stream(spark: SparkSession, copy: Path) -> DataFrame:
        apply_run_confs(spark, dict(scenario.confs))
        source_run = SourceRun(
            config=scenario.source_config(spec.seed),
            tap=str(run_dir / "tap.json"),
            input_dir=str(run_dir / "input"),
            checkpoint=str(copy),
            fault_dir=str(work / "faults"),
            max_rows_per_batch=spec.effective_batch_rows(scenario.max_rows_per_batch),
            write_points=False,
            resources=json.loads(resources.read_text()) if resources.exists() else {},
        )
        frame: DataFrame = scenario.transform(scenario.source.stream(spark, source_run))
        return frame

    return stream
