"""Effects of steps (fault_injectors/effects.py) and the kill points drawn from them: the classification of real
step descriptions, the boundaries of a call, crash-anywhere's sampling and the census that chaos draws from."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from fault_injectors.effects import PURE_MODULES, boundaries, callee_of, inside_effects, is_effect
from fault_injectors.steps import CallCensus, Scope, StepTracer, read_census
from harness.chaos.census import Census, Target, sample_targets

CLASSIFIED = [
    # effects: drivers, the OS, files, network, processes, writes through Spark, unknown libraries
    ("sqlite3.connect", True),
    ("sqlite3.Connection.commit", True),
    ("sqlite3.Cursor.fetchone", True),
    ("psycopg.Connection.execute", True),
    ("os.replace", True),
    ("io.open", True),
    ("io.TextIOWrapper.write", True),
    ("socket.socket.sendall", True),
    ("subprocess.run", True),
    ("shutil.copyfile", True),
    ("logging.Logger.info", True),
    ("builtins.print", True),
    ("py4j.java_gateway.JavaMember.__call__", True),
    ("pyarrow.parquet.write_table", True),
    ("harness.anything.at_all", True),
    ("__main__.helper", True),
    ("pyspark.sql.readwriter.DataFrameWriter.parquet", True),
    ("pyspark.sql.readwriter.DataFrameWriter.saveAsTable", True),
    ("pyspark.sql.readwriter.DataFrameWriterV2.append", True),
    ("pyspark.sql.connect.readwriter.DataFrameWriterV2.overwritePartitions", True),
    ("pyspark.sql.merge.MergeIntoWriter.merge", True),
    ("pyspark.sql.session.SparkSession.sql", True),
    ("pyspark.sql.classic.dataframe.DataFrame.foreachPartition", True),
    ("pyspark.core.rdd.RDD.saveAsTextFile", True),
    ("pyspark.sql.catalog.Catalog.dropTable", True),
    ("pyspark.sql.streaming.query.StreamingQuery.stop", True),
    # effect-free: pure standard library (C modules under their _name too), reads and transformations in pyspark
    ("json.dumps", False),
    ("_json.make_encoder", False),
    ("re.Pattern.match", False),
    ("datetime.datetime.now", False),
    ("hashlib.sha256", False),
    ("_hashlib.HASH.update", False),
    ("time.sleep", False),
    ("time.monotonic", False),
    ("random.Random.randint", False),
    ("builtins.setattr", False),
    ("pyspark.sql.types.Row.__getitem__", False),
    ("pyspark.sql.types.Row.asDict", False),
    ("pyspark.sql.classic.dataframe.DataFrame.collect", False),
    ("pyspark.sql.classic.dataframe.DataFrame.toLocalIterator", False),
    ("pyspark.sql.classic.dataframe.DataFrame.select", False),
    ("pyspark.sql.classic.dataframe.DataFrame.write", False),
    ("pyspark.sql.readwriter.DataFrameWriter.mode", False),
    ("pyspark.sql.functions.builtin.col", False),
    ("pyspark.sql.catalog.Catalog.tableExists", False),
    ("pyspark.sql.catalog.Catalog.listTables", False),
    ("pyspark.taskcontext.TaskContext.get", False),
]


@pytest.mark.parametrize(("callee", "effect"), CLASSIFIED, ids=[c for c, _ in CLASSIFIED])
def test_classification_of_callees(callee: str, effect: bool) -> None:
    assert is_effect(callee) is effect
    assert is_effect(f"sink.py:12 write_batch -> {callee}") is effect, "a description classifies as its callee"


def test_callee_of_a_description() -> None:
    assert callee_of("a.py:3 <listcomp> -> pyspark.sql.types.Row.__getitem__") == "pyspark.sql.types.Row.__getitem__"
    assert callee_of("os.replace") == "os.replace"
    assert {"json", "time", "hashlib"} <= PURE_MODULES and not {"os", "io", "sqlite3", "shutil"} & PURE_MODULES


USER_CODE = """
import json
import sqlite3
import time

from pyspark.sql import Row


def sink(db):
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE t (k INTEGER, v TEXT)")
    rows = [Row(k=i, v=str(i)) for i in range(3)]
    values = [(r["k"], r["v"]) for r in rows]
    json.dumps(values)
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO t VALUES (?, ?)", values)
    conn.execute("COMMIT")
    time.sleep(0)
    conn.close()


def autocommit_from_a_generator(db):
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE t (k INTEGER)")
    rows = [Row(k=i) for i in range(2)]
    conn.executemany("INSERT INTO t VALUES (?)", ((r["k"],) for r in rows))
    conn.close()


def reads_only(n):
    return json.dumps([Row(k=i)["k"] for i in range(n)])
"""


def _user_module(tmp_path: Path) -> ModuleType:
    (tmp_path / "effmod.py").write_text(textwrap.dedent(USER_CODE))
    spec = importlib.util.spec_from_file_location("effmod", tmp_path / "effmod.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _trace(tmp_path: Path, name: str, *args: object) -> tuple[list[str], list[int]]:
    mod = _user_module(tmp_path)
    with StepTracer(Scope([tmp_path / "effmod.py"]), record=True) as tracer:
        getattr(mod, name)(*args)
    assert tracer.steps is not None and tracer.depths is not None
    return tracer.steps, tracer.depths


def test_real_steps_of_sqlite_and_rows_are_split_into_effects_and_reads(tmp_path: Path) -> None:
    """The classifier neither calls everything an effect nor nothing: on a traced sink, the driver calls are
    effects, the Row reads, json and time.sleep are not."""
    steps, depths = _trace(tmp_path, "sink", str(tmp_path / "db"))
    callees = [callee_of(s) for s in steps]
    assert callees.count("pyspark.sql.types.Row.__getitem__") == 6, steps
    effects = [callee_of(s) for s in steps if is_effect(s)]
    execute = "sqlite3.Connection.execute"
    want = ["sqlite3.connect", execute, execute, "sqlite3.Connection.executemany", execute, "sqlite3.Connection.close"]
    assert effects == want, steps
    free = {c for c in callees if not is_effect(c)}
    assert free == {"pyspark.sql.types.Row.__new__", "pyspark.sql.types.Row.__getitem__", "json.dumps", "time.sleep"}
    assert all(d == 0 for d in depths), "no step is nested in another here"
    # kill points: after each effect only; the 10 effect-free steps between CREATE and BEGIN are one experiment
    effect_steps = [k for k, s in enumerate(steps, 1) if is_effect(s)]
    assert boundaries(steps, depths) == effect_steps and len(effect_steps) == 6 < len(steps) == 17


def test_steps_inside_a_running_effect_are_kill_points_tried_last(tmp_path: Path) -> None:
    """executemany pulling rows from the user's generator, each insert committed as it goes: a kill after
    the second row's read sees one row written, so those reads are boundaries, marked as inside an effect."""
    steps, depths = _trace(tmp_path, "autocommit_from_a_generator", str(tmp_path / "db"))
    reads = [k for k, s in enumerate(steps, 1) if "<genexpr> -> pyspark.sql.types.Row.__getitem__" in s]
    many = next(k for k, s in enumerate(steps, 1) if s.endswith("executemany"))
    assert len(reads) == 2 and all(depths[k - 1] == 1 for k in reads) and depths[many - 1] == 0
    assert inside_effects(steps, depths) == set(reads)
    assert set(reads) <= set(boundaries(steps, depths))
    assert not set(reads) & set(boundaries(steps)), "without depths (an old census) nothing counts as nested"


def test_a_call_without_effects_has_one_kill_point(tmp_path: Path) -> None:
    steps, depths = _trace(tmp_path, "reads_only", 3)
    assert len(steps) == 7 and not any(map(is_effect, steps)), steps
    assert boundaries(steps, depths) == [len(steps)]
    assert boundaries([]) == []


@pytest.mark.parametrize(
    ("kinds", "expected"),
    [
        ("EEE", [1, 2, 3]),
        ("rrErrErr", [2, 3, 6]),  # the step before the first effect, then each effect
        ("rE", [1, 2]),
        ("Errrr", [1]),
        ("rrrr", [4]),
    ],
)
def test_boundaries_of_a_call(kinds: str, expected: list[int]) -> None:
    steps = ["a.py:1 f -> os.replace" if c == "E" else "a.py:2 f -> pyspark.sql.types.Row.__getitem__" for c in kinds]
    assert boundaries(steps) == expected


def test_nested_reads_inside_an_effect_free_call_are_not_kill_points() -> None:
    # step 1 returns inside step 2 (json.dumps calling the user's default=); step 3 is os.replace
    steps = ["a.py:1 g -> pyspark.sql.types.Row.__getitem__", "a.py:2 f -> json.dumps", "a.py:3 f -> os.replace"]
    assert boundaries(steps, [1, 0, 0]) == [2, 3] and inside_effects(steps, [1, 0, 0]) == set()
    # the same nesting under an effect: the read is inside it
    steps[1] = "a.py:2 f -> sqlite3.Connection.executemany"
    assert boundaries(steps, [1, 0, 0]) == [1, 2, 3] and inside_effects(steps, [1, 0, 0]) == {1}


def _targets(n: int) -> list[Target]:
    return [("foreach_batch", None, k, f"a.py:{k} f -> os.replace") for k in range(1, n + 1)]


def test_sampling_tries_every_boundary_that_fits_and_samples_only_beyond_the_budget() -> None:
    targets = _targets(12)
    assert sample_targets(targets, 12, seed=3) == targets and sample_targets(targets, 30, seed=3) == targets
    assert sample_targets(targets, None, seed=3) == targets
    for seed in range(20):
        chosen = sample_targets(targets, 10, seed)
        assert len(chosen) == len(set(chosen)) == 10 and chosen == sorted(chosen, key=lambda t: t[2])
        assert sum(t[2] in (8, 9, 10) for t in chosen) >= 1, "9 others cannot fill 10 kills"
    assert len({tuple(sample_targets(targets, 5, s)) for s in range(10)}) > 1, "the sample depends on the seed"
    assert sample_targets(targets, 5, seed=4) == sample_targets(targets, 5, seed=4)


def test_sampling_covers_boundaries_outside_effects_before_those_inside() -> None:
    targets = _targets(12)
    later = set(targets[2:9])  # 7 reads inside one running executemany
    for seed in range(10):
        chosen = sample_targets(targets, 7, seed, later)
        assert set(targets) - later <= set(chosen), "the 5 boundaries between effects come first"
        assert len(chosen) == 7 and len(set(chosen) & later) == 2
    assert set(sample_targets(targets, 3, seed=1, later=later)) <= set(targets) - later


def test_census_renders_effects_and_boundaries_and_gives_boundary_targets(tmp_path: Path) -> None:
    steps = ("s.py:3 f -> sqlite3.connect", *["s.py:4 <listcomp> -> pyspark.sql.types.Row.__getitem__"] * 5)
    steps += (
        "s.py:5 f -> sqlite3.Connection.execute",
        "s.py:6 f -> time.sleep",
        "s.py:7 f -> sqlite3.Connection.close",
    )
    census = Census("s", 1, {("foreach_batch", 1, None): CallCensus("foreach_batch", 1, None, 0, steps, True)})
    assert [t[2] for t in census.boundary_targets(1)] == [1, 7, 9] and len(census.targets(1)) == 9
    assert census.boundary_targets(1)[1] == ("foreach_batch", None, 7, steps[6])
    text = census.render()
    assert "batch 1, foreach_batch: 9 step(s), 3 effect boundary(ies)" in text
    assert ">  1.* s.py:3 f -> sqlite3.connect" in text and "   2.  s.py:4 <listcomp>" in text
    assert "   8.  s.py:6 f -> time.sleep" in text and ">  9.* s.py:7" in text


def test_census_file_round_trips_depths_and_reads_old_records(tmp_path: Path) -> None:
    record = {"wrapper": "foreach_batch", "batch": 1, "partition": None, "attempt": 0, "completed": True}
    steps = ["a.py:1 g -> pyspark.sql.types.Row.__getitem__", "a.py:2 f -> sqlite3.Connection.executemany"]
    lines = [{**record, "steps": steps, "depths": [1, 0]}, {**record, "batch": 2, "steps": steps}]
    (tmp_path / "census.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    new, old = read_census(tmp_path)
    assert new.depths == (1, 0) and new.boundaries() == [1, 2] and new.inside_effects() == {1}
    assert old.depths == () and old.boundaries() == [1, 2] and old.inside_effects() == set()


def test_census_cache_gives_chaos_each_calls_boundaries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import harness.chaos.census as census_module

    steps = ("s.py:3 f -> sqlite3.connect", *["s.py:4 f -> pyspark.sql.types.Row.__getitem__"] * 4)
    steps += ("s.py:5 f -> sqlite3.Connection.execute",)
    calls = {
        ("foreach_batch", b, None): CallCensus("foreach_batch", b, None, 0, steps[: 6 - b], True) for b in range(3)
    }
    monkeypatch.setattr(census_module, "take_census", lambda scenario, seed, **_: Census(scenario, seed, calls))
    said: list[str] = []
    cache = census_module.CensusCache("s", pool=None, work_dir=tmp_path, say=said.append)  # type: ignore[arg-type]
    got = cache(1, [[3]])
    assert got == {
        0: [("foreach_batch", None, (1, 6))],
        1: [("foreach_batch", None, (1,))],
        2: [("foreach_batch", None, (1,))],
    }
    assert "boundaries/steps per batch 0:2/6, 1:1/5, 2:1/4" in said[0] and cache.runs == 1
