"""The inspector on checkpoints real Spark wrote: parsed values, Spark's own state
readers, and mutations that must be named (exit 1) or refused (exit 2).

Every kind of checkpoint is built once per module (``built``); mutation tests
work on copies.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pyspark
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from harness.cli.main import main
from harness.inspector import InspectionReport, inspect_checkpoint, read_batches, summarize
from harness.inspector.sinklog import uri_to_path
from harness.inspector.spark_view import spark_state_view
from harness.inspector.synth import write_with_crc
from scenarios.admission import offsets_from_json, plan_batches
from tests.integration.clirun import assert_renders

END = {"0": 50, "1": 50}
ROOT = Path(__file__).parents[2]


def _replayable(spark: SparkSession, seed: int = 1, end: dict[str, int] | None = None, rows: int = 20) -> DataFrame:
    return (
        spark.readStream.format("replayable")
        .option("seed", seed)
        .option("end", json.dumps(end or END))
        .option("max_rows_per_batch", rows)
        .load()
    )


def _run(df: DataFrame, ck: Path, fmt: str = "memory", name: str | None = None, **opts: str) -> dict[str, Any]:
    w = df.writeStream.format(fmt).option("checkpointLocation", str(ck)).options(**opts)
    if name:
        w = w.queryName(name)
    q = w.trigger(availableNow=True).start()
    q.awaitTermination()
    return {"id": q.id, "progress": q.lastProgress}


@pytest.fixture(scope="module")
def built(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("inspector")
    b: dict[str, Any] = {"root": root}
    b["stateless"] = _run(_replayable(spark), root / "stateless", "parquet", path=str(root / "out"))
    agg = (
        _replayable(spark).withWatermark("event_time", "10 seconds").groupBy(F.window("event_time", "5 seconds"), "key")
    )
    b["agg"] = _run(agg.count(), root / "agg", name="insp_agg")
    b["dedup"] = _run(_replayable(spark).dropDuplicates(["key"]), root / "dedup", name="insp_dedup")
    b["dedup_rows"] = spark.table("insp_dedup").count()
    two = _replayable(spark).union(_replayable(spark, seed=2, end={"0": 30}, rows=10))
    b["two"] = _run(two, root / "two", name="insp_two")
    (root / "in").mkdir()
    spark.range(10).write.json(str(root / "in" / "a"))
    b["files_in"] = sorted(p.name for p in (root / "in" / "a").glob("part-*.json"))
    src = spark.readStream.schema("id LONG").json(str(root / "in" / "a"))
    b["filesrc"] = _run(src, root / "filesrc", name="insp_files")
    v2 = {
        "spark.sql.streaming.offsetLog.formatVersion": "2",
        "spark.sql.streaming.stateStore.providerClass": (
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
        ),
        "spark.sql.streaming.stateStore.checkpointFormatVersion": "2",
    }
    try:
        for k, v in v2.items():
            spark.conf.set(k, v)
        b["v2"] = _run(agg.count(), root / "v2", name="insp_v2")
    finally:
        for k in v2:
            spark.conf.unset(k)
    b["max_event_ms"] = int(
        spark.read.format("replayable")
        .option("seed", 1)
        .option("end", json.dumps(END))
        .load()
        .agg(F.max(F.unix_millis("event_time")))
        .collect()[0][0]
    )
    return b


def _ok(report: InspectionReport) -> None:
    assert report.violations == (), [f.line() for f in report.violations]


def test_stateless_query_into_file_sink(built: dict[str, Any]) -> None:
    root = built["root"]
    report = inspect_checkpoint(root / "stateless", root / "out")
    _ok(report)
    m = report.model
    assert m.query_id == str(built["stateless"]["id"])
    predicted = plan_batches({0: 0, 1: 0}, {0: 50, 1: 50}, 20)
    assert [offsets_from_json(m.offsets[b].sources[0]) for b in m.offset_ids] == [end for _, end in predicted]
    assert m.offset_ids == m.commit_ids == list(range(len(predicted)))
    assert all(c.version == 1 and c.next_watermark_ms == 0 for c in m.commits.values())
    written = json.loads((root / "stateless" / "offsets" / "0").read_text().splitlines()[1])["conf"]
    assert m.offsets[0].conf == written and m.offsets[0].conf["spark.sql.shuffle.partitions"] == "2"
    assert m.state == [] and m.sources == {}
    live = [uri_to_path(e["path"]) for e in m.sink.log.live_entries()]
    assert sorted(live) == sorted(root.joinpath("out").glob("part-*.parquet"))
    assert sum(pq.read_table(p).num_rows for p in live) == 100
    assert sum(r.sink_files_added or 0 for r in report.timeline) == len(live)
    first = report.timeline[1].sources[0]
    assert (first.start, first.end) == ({"0": 10, "1": 10}, {"0": 20, "1": 20})
    assert len(m.checksums.results) > 3 * len(predicted) and not m.checksums.mismatches
    assert [r.batch_id for r in read_batches(root / "stateless")] == m.offset_ids  # the runner's API still agrees


def test_aggregation_with_watermark(built: dict[str, Any]) -> None:
    report = inspect_checkpoint(built["root"] / "agg")
    _ok(report)
    m = report.model
    last = m.offset_ids[-1]
    for bid in m.offset_ids[:-1]:
        assert m.offsets[bid + 1].watermark_ms == m.commits[bid].next_watermark_ms
    assert m.commits[last].next_watermark_ms == built["max_event_ms"] - 10_000
    progress_wm = dt.datetime.fromisoformat(built["agg"]["progress"]["eventTime"]["watermark"].replace("Z", "+00:00"))
    assert m.offsets[last].watermark_ms == int(progress_wm.timestamp() * 1000)
    (op,) = m.state
    assert (op.operator_id, op.name, op.num_partitions, op.partition_ids) == (0, "stateStoreSave", 2, [0, 1])
    assert [s.versions for s in op.stores] == [list(range(1, last + 2))] * 2
    assert {f.kind for s in op.stores for f in s.files} == {"delta"}
    assert all(c.stores_with_version == 2 for r in report.timeline for c in r.state)


def test_drop_duplicates_state_through_spark_readers(built: dict[str, Any], spark: SparkSession) -> None:
    ck = built["root"] / "dedup"
    report = inspect_checkpoint(ck)
    _ok(report)
    (op,) = report.model.state
    assert op.name == "dedupe"
    view = spark_state_view(spark, ck)
    assert view.errors == ()
    (meta,) = view.operators
    assert (meta["operatorName"], meta["numPartitions"], meta["maxBatchId"]) == ("dedupe", 2, op.max_version() - 1)
    (store,) = view.stores
    assert store.rows == built["dedup_rows"] > 0  # one state row per distinct key the query emitted
    assert set(store.rows_per_partition) <= {0, 1}


def test_cli_spark_state_view_reuses_the_active_session(
    built: dict[str, Any], spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["inspect", str(built["root"] / "dedup"), "--state", "--limit", "1"])
    out = capsys.readouterr().out
    assert code == 0
    assert "state through Spark (state-metadata / statestore readers):" in out
    assert f"operator 0 store default: {built['dedup_rows']} row(s)" in out
    assert "cross-check with the inspector's reading of the files: 6 agree, 0 disagree" in out, out
    assert main(["inspect", str(built["root"] / "dedup"), "--spark-state", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["spark_state"]["stores"][0]["rows"] == built["dedup_rows"]
    assert doc["spark_state"]["stores"][0]["sample"][0].startswith("key.key=")
    assert doc["spark_state"]["cross_check"]["disagree"] == [] and len(doc["spark_state"]["cross_check"]["agree"]) == 6
    assert spark.range(1).count() == 1  # the shared session is still alive


def test_state_cross_check_of_a_rocksdb_v2_checkpoint_names_what_spark_cannot_read(
    built: dict[str, Any], spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    """Measured on PySpark 4.3 and 4.2: state-metadata lists the operator of a format-2 RocksDB checkpoint, and the
    statestore reader fails on its ``<version>_<uuid>`` files; what could be compared agrees, the rest is named."""
    assert main(["inspect", str(built["root"] / "v2"), "--state", "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "cross-check with the inspector's reading of the files: 5 agree, 0 disagree" in out, out
    assert "  not compared (a reader failed): statestore operator 0 store default: " in out, out
    # The reader's own failure, named: 4.3 fails parsing the file names, 4.2 earlier (an empty Option).
    assert ("NumberFormatException" if pyspark.__version__ >= "4.3" else "java.util.NoSuchElementException") in out


def test_state_cross_check_names_a_newest_version_spark_and_the_files_disagree_on(
    built: dict[str, Any], spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The newest state version's files removed from a copy: the commit log still says the batch committed."""
    ck = tmp_path / "dedup"
    shutil.copytree(built["root"] / "dedup", ck)
    (op,) = inspect_checkpoint(ck).model.state
    newest = op.max_version()
    for f in ck.glob(f"state/0/*/{newest}.delta"):
        f.unlink()
    code = main(["inspect", str(ck), "--state", "--limit", "1", "--no-checksums"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "DISAGREE operator 0 newest " in out, out


def test_two_sources(built: dict[str, Any]) -> None:
    report = inspect_checkpoint(built["root"] / "two")
    _ok(report)
    m = report.model
    assert all(len(e.sources) == 2 for e in m.offsets.values())
    last = m.offsets[m.offset_ids[-1]]
    assert last.sources[0] == {"0": 50, "1": 50} and last.sources[1]["0"] == 30
    for row, prev in zip(report.timeline[1:], report.timeline, strict=False):
        assert [s.start for s in row.sources] == [s.end for s in prev.sources]


def test_file_source_log(built: dict[str, Any]) -> None:
    report = inspect_checkpoint(built["root"] / "filesrc")
    _ok(report)
    m = report.model
    assert m.offsets[0].sources == ({"logOffset": 0},)
    entries = m.sources["0"].batches[0].entries
    assert sorted(Path(uri_to_path(e["path"])).name for e in entries) == built["files_in"]
    assert {e["batchId"] for e in entries} == {0}


def test_offsets_v2_and_commits_v2_with_state_unique_ids(built: dict[str, Any]) -> None:
    report = inspect_checkpoint(built["root"] / "v2")
    _ok(report)
    m = report.model
    assert {e.version for e in m.offsets.values()} == {2}
    assert all(e.source_ids == ("0",) for e in m.offsets.values())
    last = m.commit_ids[-1]
    commit = m.commits[last]
    assert commit.version == 2 and set(commit.state_unique_ids) == {"0"}
    (op,) = m.state
    for part, ids in enumerate(commit.state_unique_ids["0"]):
        files = {(f.version, f.unique_id, f.kind) for s in op.stores if s.partition_id == part for f in s.files}
        assert (last + 1, ids[0], "zip") in files
    assert {r.kind for r in m.checksums.results} == {"hadoop", "spark"}  # RocksDB v2 writes JSON CRC32C sidecars


def test_inspect_html_of_a_real_rocksdb_v2_checkpoint_renders(built: dict[str, Any], tmp_path: Path) -> None:
    """``inspect --html``: the batches drawn, the table with watermarks and state versions, in headless Chromium."""
    page = tmp_path / "v2.html"
    assert main(["inspect", str(built["root"] / "v2"), "--html", str(page)]) == 0
    last = inspect_checkpoint(built["root"] / "v2").model.commit_ids[-1]
    assert_renders(page, tmp_path, f"batch {last}", "watermark", f"op0:v{last + 1}", "checkpoint OK")


def test_summary_of_a_real_checkpoint(built: dict[str, Any]) -> None:
    text = summarize(built["root"] / "agg", tail=2)
    assert text.splitlines()[0].startswith(f"checkpoint OK: query {built['agg']['id']}")
    assert len(text.splitlines()) == 4


# -- mutations -------------------------------------------------------------------------------


def _copy(built: dict[str, Any], tmp_path: Path) -> tuple[Path, Path]:
    """The stateless checkpoint and its sink, copied, with the sink log's absolute paths moved along
    (a plain copy would point at the original files: see `sink-path-foreign`)."""
    src_ck, src_out = built["root"] / "stateless", built["root"] / "out"
    ck, out = tmp_path / "ck", tmp_path / "out"
    shutil.copytree(src_ck, ck)
    shutil.copytree(src_out, out)
    for f in (out / "_spark_metadata").iterdir():
        if not f.name.startswith("."):
            write_with_crc(f, f.read_text().replace(src_out.as_uri(), out.as_uri()))
    return ck, out


def _inspect_cli(capsys: pytest.CaptureFixture[str], ck: Path, out: Path) -> tuple[int, str, str]:
    code = main(["inspect", str(ck), "--sink-dir", str(out), "--limit", "0"])
    o, e = capsys.readouterr()
    return code, o, e


def _violation_lines(stdout: str) -> list[str]:
    return [ln.strip() for ln in stdout.splitlines() if ln.startswith("  [") and not ln.startswith("  [crc-orphan]")]


def test_relocated_copy_is_clean(built: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck, out = _copy(built, tmp_path)
    assert _inspect_cli(capsys, ck, out)[0] == 0


@pytest.mark.parametrize(
    ("mutation", "fid", "rel"),
    [
        ("truncated-offsets", "log-corrupt", "ck/offsets/3"),
        ("empty-offsets", "log-corrupt", "ck/offsets/3"),
        ("garbage-offsets", "log-corrupt", "ck/offsets/3"),
        ("missing-commit-middle", "commits-gap", "ck/commits/2"),
        ("missing-metadata", "metadata-missing", "ck/metadata"),
        ("stale-crc", "crc-mismatch", "ck/offsets/1"),
        ("orphan-sink-file", "sink-orphan-file", "out/part-00000-deadbeef-c000.snappy.parquet"),
        ("wrong-version-line", "log-version", "ck/commits/4"),
    ],
)
def test_mutation_is_named(
    built: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], mutation: str, fid: str, rel: str
) -> None:
    ck, out = _copy(built, tmp_path)
    target = tmp_path / rel
    if mutation == "truncated-offsets":
        write_with_crc(target, target.read_bytes()[:150])
    elif mutation == "empty-offsets":
        write_with_crc(target, b"")
    elif mutation == "garbage-offsets":
        write_with_crc(target, bytes(range(200, 256)) * 3)
    elif mutation in ("missing-commit-middle", "missing-metadata"):
        target.unlink()
    elif mutation == "stale-crc":
        target.write_text(target.read_text().replace('{"0": 20, "1": 20}', '{"0": 21, "1": 20}'))
    elif mutation == "orphan-sink-file":
        shutil.copy(next(out.glob("part-*.parquet")), target)
    elif mutation == "wrong-version-line":
        write_with_crc(target, target.read_text().replace("v1", "v99", 1))
    code, stdout, stderr = _inspect_cli(capsys, ck, out)
    assert (code, stderr) == (1, "")
    lines = _violation_lines(stdout)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"[{fid}] {target}: ")


def test_unreadable_input_through_the_module(built: dict[str, Any], tmp_path: Path) -> None:
    _, out = _copy(built, tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "inspect", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        f"harness inspect: {out}: is a file sink's output directory, not a checkpoint; pass it as --sink-dir with "
        "the checkpoint\n"
    )
