"""When the user's own code raises inside Spark, the report names the exception, its message and the user's
innermost frame (file:line), and counts it as a failure of the subject (exit 1), not as "no verdict": a source
whose ``latestOffset`` raises and one whose ``read`` raises (``check-source``; the second installed with pip, under
``site-packages``), a source whose rows PySpark refuses (no frame of its own: the method is named), a pipeline whose
``foreachBatch`` function raises on clean input and one whose transform raises before its query starts (``run``),
and a chaos campaign over the first (stopped and shrunk). Real Spark, run the way a user runs the harness. The
refused rows and the raising transform are the heavy tier's (``bin/test-heavy``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from scenarios import Scenario
from tests.integration.clirun import harness, harness_json, leftover_processes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

    from scenarios import SinkContext

LOG_CONTEXT = "examples/connectors/_jsonl.py:log_context"
ROOT = Path(__file__).resolve().parents[2]


def write_batch(batch_df: DataFrame, batch_id: int) -> None:
    rows = batch_df.count()
    print(rows / 0)  # the bug: raises on every batch, clean input or not


def attach_sink(writer: DataStreamWriter, ctx: SinkContext) -> DataStreamWriter:
    return writer.foreachBatch(write_batch)


def read_output(spark: SparkSession, ctx: SinkContext, schema: StructType) -> DataFrame:
    return spark.createDataFrame([], schema)


RAISING_SINK = Scenario(
    name="raising_sink",
    summary="a foreachBatch sink that divides by zero",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged",),
    transform=lambda df: df,
    attach_sink=attach_sink,
    read_output=read_output,
)
RAISING_LINE = write_batch.__code__.co_firstlineno + 2


def transform_by_config(df: DataFrame) -> DataFrame:
    columns = {"key": "key"}
    return df.select(columns["value"])  # the bug: raises while the query is being defined, before it starts


RAISING_TRANSFORM = Scenario(
    name="raising_transform",
    summary="a transform that looks up a column it was never given",
    guarantee="exactly-once",
    kill_points=("after_offsets_logged",),
    transform=transform_by_config,
    attach_sink=attach_sink,
    read_output=read_output,
)


def line_of(path: str | Path, statement: str) -> int:
    """The line number of ``statement`` in ``path`` (relative: to the repository)."""
    lines = (ROOT / path).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if statement in line)


def end_to_end(doc: dict[str, object]) -> dict[str, str]:
    checks = doc["checks"]
    assert isinstance(checks, list)
    found: dict[str, str] = next(c for c in checks if c["id"] == "end-to-end")
    return found


def test_a_source_whose_latest_offset_raises_is_named_by_its_frame(tmp_path: Path) -> None:
    rc, out, err = harness(
        "check-source",
        "examples/connectors/raising_latest_offset.py:RaisingLatestOffsetSource",
        "--context",
        LOG_CONTEXT,
        "--json",
        str(tmp_path / "report.json"),
    )
    e2e = end_to_end(json.loads((tmp_path / "report.json").read_text()))
    assert rc == 1 and e2e["status"] == "fail", out + err[-3000:]
    src = "examples/connectors/raising_latest_offset.py"
    inner, outer = line_of(src, 'int(shard["sequence_end"])'), line_of(src, "shard_end(sh) for sh in shards")
    assert f"KeyError: 'sequence_end' at {src}:{inner} in shard_end" in e2e["summary"], e2e
    assert f"(called from {src}:{outer} in latestOffset)" in e2e["summary"], e2e
    assert "FAIL end-to-end" in out and "KeyError: 'sequence_end'" in out
    assert "Traceback" not in out and "python_streaming_source_runner" not in out
    assert leftover_processes() == []


def test_a_pip_installed_source_whose_read_raises_in_the_python_worker_is_named_by_its_frame(tmp_path: Path) -> None:
    """The connector under ``site-packages`` (installed with pip): before, its frames counted as a library's and
    the report was "no verdict" with Spark's wrapper frames."""
    package = tmp_path / "lib" / "python3.11" / "site-packages" / "acme_feed"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    src = package / "source.py"
    src.write_text((ROOT / "examples/connectors/raising_read.py").read_text())
    rc, doc, log = harness_json(
        tmp_path / "report.json", "check-source", f"{src}:RaisingReadSource", "--context", LOG_CONTEXT, "--kills", "0"
    )
    e2e = end_to_end(doc)
    assert rc == 1 and e2e["status"] == "fail", log
    inner, outer = line_of(src, 'body = record["payload"]'), line_of(src, "yield decode(record)")
    assert f"KeyError: 'payload' at {src}:{inner} in decode (called from {src}:{outer} in read)" in e2e["summary"]
    assert "worker.py" not in e2e["summary"], e2e
    assert leftover_processes() == []


@pytest.mark.heavy  # CI time: the two raising sources above are the default suite's source cases
def test_a_row_pyspark_refuses_names_the_method_that_returned_it(tmp_path: Path) -> None:
    """The report the issue measured (``pyspark/worker.py``, line 3622, and no frame of the source's own): PySpark
    raised on the rows ``read`` yielded. It is the source's failure, named with that exception and ``read``."""
    src = tmp_path / "short_rows.py"
    src.write_text(
        "from examples.connectors.raising_read import RaisingReadReader, RaisingReadSource\n\n\n"
        "class ShortRowsReader(RaisingReadReader):\n"
        "    def read(self, partition):\n"
        "        for r in self.client.get_records(partition.shard, partition.start, partition.end):\n"
        "            yield (r['partition'], r['line'])  # the schema has three columns\n\n\n"
        "class ShortRowsSource(RaisingReadSource):\n"
        "    def streamReader(self, schema):\n"
        "        return ShortRowsReader(self.options)\n"
    )
    rc, doc, log = harness_json(
        tmp_path / "report.json", "check-source", f"{src}:ShortRowsSource", "--context", LOG_CONTEXT, "--kills", "0"
    )
    e2e = end_to_end(doc)
    assert rc == 1 and e2e["status"] == "fail", log
    assert "PySparkRuntimeError: [DATA_SOURCE_RETURN_SCHEMA_MISMATCH]" in e2e["summary"], e2e
    assert f"raised by PySpark on what read returned (ShortRowsReader.read at {src}:5)" in e2e["summary"], e2e
    assert leftover_processes() == []


def test_a_pipeline_whose_sink_raises_fails_with_its_cause(tmp_path: Path) -> None:
    rc, out, err = harness(
        "run",
        "tests.integration.test_user_raised:RAISING_SINK",
        "--seed",
        "1",
        "--kills",
        "0",
        "--rounds",
        "1",
        "--run-dir",
        str(tmp_path / "run"),
    )
    first = out.splitlines()[0] if out else ""
    assert rc == 1, out + err[-3000:]
    assert first.startswith(
        "pipeline failed: ZeroDivisionError: division by zero at "
        f"tests/integration/test_user_raised.py:{RAISING_LINE} (batch 0), in write_batch; "
        "the pipeline's own code raised"
    ), out
    assert "Spark's error: [FOREACH_BATCH_USER_FUNCTION_ERROR]" in out
    assert "Traceback" not in out and "clientserver.py" not in out
    assert leftover_processes() == []


@pytest.mark.heavy  # CI time: the raising sink above is the default suite's pipeline case
def test_a_transform_that_raises_before_the_query_starts_fails_with_its_cause(tmp_path: Path) -> None:
    rc, out, err = harness(
        "run", "tests.integration.test_user_raised:RAISING_TRANSFORM", "--seed", "1", "--kills", "0", "--rounds", "1"
    )
    line = transform_by_config.__code__.co_firstlineno + 2
    assert rc == 1, out + err[-3000:]
    assert out.startswith(
        f"pipeline failed: KeyError: 'value' at tests/integration/test_user_raised.py:{line} (before its query "
        "started), in transform_by_config; the pipeline's own code raised"
    ), out
    assert "Traceback" not in out and "driver.py" not in out
    assert leftover_processes() == []


def test_a_chaos_campaign_reports_the_pipelines_raise_as_its_failure(tmp_path: Path) -> None:
    """Before: the example's "no verdict" was neither a violation nor an infrastructure error, and the campaign
    passed (exit 0). Now it stops there, shrinks it and says it needs no fault."""
    rc, doc, log = harness_json(
        tmp_path / "campaign.json",
        "chaos",
        "tests.integration.test_user_raised:RAISING_SINK",
        "--examples",
        "1",
        "--seed",
        "1",
        "--profile",
        "ci",
        "--work-dir",
        str(tmp_path / "work"),
    )
    assert rc == 1 and doc["verdict"] == "violated", log
    assert "pipeline failed, shrunk to" in log and "no fault is needed" in log, log
    assert f"ZeroDivisionError: division by zero at tests/integration/test_user_raised.py:{RAISING_LINE}" in log
    assert leftover_processes() == []
