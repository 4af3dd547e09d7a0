"""The new version ``upgrade-check`` resumes: a harness ``Scenario`` or a user's query builder, by reference.

``NEW`` is a library scenario's name, or ``path/to/file.py:NAME`` / ``package.module:NAME`` naming a ``Scenario``
or a function ``(spark) -> streaming DataFrame`` (production's query up to ``writeStream``, reading production's
source). A scenario's source is the harness's, so a scenario needs the harness run directory the checkpoint
lies in (``spec.json``, ``tap.json``): its input. Errors are :class:`PipelineError`, one line saying what to give.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import UsageError
from harness.upgrade.probe import StreamFn

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class PipelineError(UsageError, ValueError):
    """The new pipeline cannot be loaded or fed; the message says why and what to give."""


@dataclass(frozen=True)
class NewPipeline:
    """``stream`` builds the new version's query; ``confs`` are the confs it sets explicitly; ``name`` for reports;
    ``sink_path``: the directory of the file sink it writes (``None``: no file sink, or not known)."""

    name: str
    stream: StreamFn
    confs: dict[str, str]
    sink_path: str | None = None


def load_pipeline(ref: str, checkpoint: Path, work: Path, sink_path: str | None = None) -> NewPipeline:
    """The pipeline ``ref`` names, wired to ``checkpoint``'s input (see the module docstring). ``sink_path``: the
    file sink's directory production's writer uses (a scenario's own sink says it itself)."""
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
        stream = _scenario_stream(obj, checkpoint, work)
        return NewPipeline(obj.name, stream, dict(obj.confs), sink_path or _file_sink_path(obj, checkpoint, work))
    if callable(obj):
        return NewPipeline(ref, lambda spark, _copy: obj(spark), {}, sink_path)
    raise PipelineError(
        f"{ref} is a {type(obj).__name__}: give a Scenario or a function (spark) -> streaming DataFrame"
    )


def _scenario_stream(scenario: Any, checkpoint: Path, work: Path) -> StreamFn:
    from harness.engine.spec import RunSpec
    from harness.spark.session import apply_run_confs
    from scenarios.base import RUN_OUTPUT_ENV
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
        os.environ[RUN_OUTPUT_ENV] = str(run_dir / "output")  # as a harness driver does, for the transform
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


#: Formats of Spark's file sink (``FileStreamSink``: a ``_spark_metadata`` log in the output directory).
FILE_SINK_FORMATS = frozenset({"parquet", "json", "csv", "orc", "text"})


class _WriterRecorder:
    """Stands in for a ``DataStreamWriter`` while a scenario's ``attach_sink`` configures it: records the format
    and options, accepts every other call."""

    def __init__(self) -> None:
        self.fmt: str | None = None
        self.opts: dict[str, str] = {}

    def format(self, source: str) -> _WriterRecorder:
        self.fmt = source
        return self

    def option(self, key: str, value: object) -> _WriterRecorder:
        self.opts[key] = str(value)
        return self

    def options(self, **options: object) -> _WriterRecorder:
        self.opts.update({k: str(v) for k, v in options.items()})
        return self

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


def _file_sink_path(scenario: Any, checkpoint: Path, work: Path) -> str | None:
    """The output directory of ``scenario``'s sink in the run directory ``checkpoint`` lies in, when it is
    Spark's file sink; ``None`` for any other sink (or one whose set-up needs more than a writer)."""
    from fault_injectors.crash import FaultSite
    from scenarios.base import SinkContext

    run_dir = checkpoint.resolve().parent
    ctx = SinkContext(str(run_dir / "output"), str(checkpoint), FaultSite(work / "faults", checkpoint), {})
    recorder = _WriterRecorder()
    try:
        scenario.attach_sink(recorder, ctx)
    except Exception:  # a sink that needs a real writer or a resource: no file sink the check can name
        return None
    path = recorder.opts.get("path")
    return path if (recorder.fmt or "").lower() in FILE_SINK_FORMATS and path else None
