"""A user's test file of chaos tests and conformance-kit tests, run under pytest-xdist (``-n 2``).

Four subjects, as a team would have them: a chaos test of a pipeline that holds (the parquet file sink), a
chaos test of a known-broken pipeline (``foreachBatch`` append without batch-id dedup), the conformance kit of
a correct source (JSON lines) and of a broken one (overlapping partitions). Each worker is its own process with
its own SparkSession, driver pools and temp directories; the outcomes must be those of a serial run, each
failure's section must name its seed and rerun command, the kit's checks must run once per class however the
tests are spread over the workers, and no JVM or Python worker may outlive the run.

The run is the default suite's smoke of the newest PySpark the harness supports: it happens in a fresh
environment holding that release and this checkout's wheel (``tests/matrix.py``, as ``bin/test-matrix`` builds
it), so a file sink holding under kills, a broken sink caught and a source's checks are all measured there
(the oldest release's smoke is ``test_user_project``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from harness.engine.commandline import harness_prefix, shell_line
from harness.spark.procs import TOKEN_PREFIX_ENV
from tests.matrix import RELEASES
from tests.matrix_env import build

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

USER_TESTS = """
import pytest

from examples.connectors._jsonl import log_context
from examples.connectors.jsonl_source import JsonlSource
from examples.connectors.overlapping_partitions import OverlappingPartitionsSource
from fault_injectors.sinks import crash_injecting_foreach_batch
from harness.conformance.pytest_kit import SourceConformance
from scenarios import Scenario
from scenarios.base import read_parquet_output
from scenarios.library.file_sink_stateless import transform


def attach_sink(writer, ctx):
    def append_batch(batch_df, batch_id):  # the bug: no record of the batch ids already appended
        batch_df.write.mode("append").parquet(ctx.output)

    return writer.foreachBatch(crash_injecting_foreach_batch(append_batch, ctx.faults))


MY_APPEND = Scenario(
    name="my_append",
    summary="foreachBatch append -> parquet, declared exactly-once",
    guarantee="exactly-once",
    kill_points=("sink.commit.after",),
    transform=transform,
    attach_sink=attach_sink,
    read_output=read_parquet_output,
)


@pytest.mark.chaos(scenario="file_sink_stateless", profile="ci", examples=1, seed=3)
def test_file_sink_holds(chaos_run):
    chaos_run().assert_exactly_once()


@pytest.mark.chaos(scenario="test_user:MY_APPEND", profile="ci", examples=2, seed=1)
def test_my_append_sink(chaos_run):
    chaos_run().assert_exactly_once()


class TestJsonlSource(SourceConformance):
    source = JsonlSource
    context = log_context
    end_to_end = False  # CI time (~10 s): the broken class's end-to-end run is this run's kill under the kit


class TestOverlappingSource(SourceConformance):
    source = OverlappingPartitionsSource
    context = log_context
    kills = 1
"""

#: Check ids the broken source fails (its docstring names ranges-contiguous; the end-to-end run shows the duplicates).
BROKEN_SOURCE_FAILS = {"ranges-contiguous", "end-to-end"}


def _processes_with(marker: str) -> list[int]:
    """Live processes whose initial environment holds ``marker`` (every process the pytest run started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def test_chaos_and_kit_tests_under_xdist(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = f"HARNESS_XDIST_PROBE={uuid.uuid4().hex}"
    name, _, value = marker.partition("=")
    monkeypatch.setenv(name, value)
    monkeypatch.setenv(TOKEN_PREFIX_ENV, f"xdist-{value[:8]}-")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    newest = RELEASES[-1]
    python = str(build(newest) / "bin" / "python")
    for name in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV", "SPARK_HOME"):
        monkeypatch.delenv(name, raising=False)  # this environment's Python would serve the other release
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(python).parent), os.environ["PATH"]]))
    pytester.makepyfile(test_user=USER_TESTS)
    # The passing chaos test runs one example (CI time): its worker usually also gets the broken source's
    # end-to-end run (~30 s), the other the failing chaos test's two (xdist's scheduling decides).
    result = pytester.run(python, "-m", "pytest", f"--basetemp={pytester.path / 'basetemp'}", "-n", "2",
                          "-p", "no:cacheprovider", "-rfEs", timeout=900)  # fmt: skip
    out = result.stdout.str()
    outcomes = result.parseoutcomes()

    failed = set(re.findall(r"^FAILED test_user\.py::(\S+)", out, re.M))
    kit_fails = {"TestOverlappingSource::test_check[" + c + "]" for c in BROKEN_SOURCE_FAILS}
    assert failed == {"test_my_append_sink", *kit_fails}, out[-6000:]
    assert outcomes.get("passed", 0) >= 1 + 7, outcomes  # the file sink's chaos test and the good source's checks
    assert not outcomes.get("error"), out[-4000:]

    # Each failure is reported once, by the worker that ran it, with its seed and rerun command.
    naive = out[out.index("_ test_my_append_sink _") :]
    assert "violation found and shrunk" in naive and "seed=1" in naive, naive[:3000]
    assert "df1 = the oracle's rows" in naive  # the duplicated rows, side by side (chispa)
    assert f"replay: {shell_line(harness_prefix(cwd=pytester.path, argv0='', executable=python))} replay " in naive
    assert out.count("_ test_my_append_sink _") == 1
    for check in BROKEN_SOURCE_FAILS:
        section = out[out.index(f"_ TestOverlappingSource.test_check[{check}] _") :]
        assert f"rerun: pytest 'test_user.py::TestOverlappingSource::test_check[{check}]'" in section, section[:2000]
        assert "no seed (deterministic checks);" in section

    # The saved failure of the chaos test: keyed by its test id, written whole.
    records = list((pytester.path / ".harness" / "failures").glob("*.json"))
    assert len(records) == 1 and "test_my_append_sink" in records[0].read_text()
    assert "duplicate" in (Path(json.loads(records[0].read_text())["bundle"]) / "bundle.json").read_text()
    assert not list((pytester.path / ".harness").rglob(".*.[0-9]*")), "a staged copy was left behind"

    # The kit's checks ran once per class, whichever worker its tests landed on.
    shared = list(pytester.path.rglob("harness-kit-reports/*.json"))
    assert len(shared) == 2, shared
    work = [p.name for p in pytester.path.rglob("TestOverlappingSource*") if p.is_dir() and not p.is_symlink()]
    assert len(work) == 1, work

    assert _processes_with(marker) == [], "a JVM, driver or Python worker of the run outlived it"
    assert f"\nharness: PySpark {newest}\n" in out, out[:2000]  # the release the run was on (the plugin's header)
    probe = subprocess.Popen(["sleep", "60"])  # the probe sees a process that carries the marker
    try:
        deadline = time.monotonic() + 10  # a clean-clone CI run once found the fresh probe missing at first
        while _processes_with(marker) != [probe.pid] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _processes_with(marker) == [probe.pid]
    finally:
        probe.kill()
        probe.wait()
