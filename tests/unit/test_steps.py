"""Steps of user code (fault_injectors/steps.py): what counts, determinism, firing, census."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from fault_injectors.crash import FaultSite, InjectedFault, read_ledger
from fault_injectors.plan import STEP_POINT, FaultPlan, FaultPlanError, FaultRule
from fault_injectors.steps import Scope, StepTracer, count_steps, read_census, run_with_steps
from harness.chaos.census import Census, sample_targets, step_rules
from harness.cli.run import parse_kill
from harness.engine.spec import RunSpec, kill_argument

ROOT = Path(__file__).resolve().parents[2]

USER_CODE = """
import json
import sqlite3

from fault_injectors.crash import decide
from pyspark.sql.types import IntegerType, StructField, StructType
from py4j.protocol import get_command_part


def rows(n):
    for i in range(n):
        yield (i, json.dumps({"i": i}))


def create(conn):
    conn.execute("CREATE TABLE IF NOT EXISTS t (i INTEGER, j TEXT)")


def sink(db, n):
    conn = sqlite3.connect(db, isolation_level=None)
    create(conn)
    seen = []
    seen.append(len(str(n)))
    conn.executemany("INSERT INTO t VALUES (?, ?)", rows(n))
    decide(1, "rule", n)
    StructType([StructField("i", IntegerType())])
    get_command_part(n)
    conn.close()
"""

EXPECTED = [
    "usermod.py:20 sink -> sqlite3.connect",
    "usermod.py:16 create -> sqlite3.Connection.execute",
    "usermod.py:12 rows -> json.dumps",
    "usermod.py:12 rows -> json.dumps",
    "usermod.py:24 sink -> sqlite3.Connection.executemany",
    "usermod.py:25 sink -> fault_injectors.crash.decide",
    "usermod.py:26 sink -> pyspark.sql.types.DataTypeSingleton.__call__",
    "usermod.py:26 sink -> pyspark.sql.types.StructField.__init__",
    "usermod.py:26 sink -> pyspark.sql.types.StructType.__init__",
    "usermod.py:27 sink -> py4j.protocol.get_command_part",
    "usermod.py:28 sink -> sqlite3.Connection.close",
]


def _user_module(tmp_path: Path) -> ModuleType:
    (tmp_path / "usermod.py").write_text(USER_CODE)
    spec = importlib.util.spec_from_file_location("usermod", tmp_path / "usermod.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_calls_out_of_user_frames_count(tmp_path: Path) -> None:
    """Calls made by pyspark, py4j, json and the harness are not steps; the call into them is one step each;
    methods of built-in values and pure built-ins are not steps; a callback into user code counts its own
    calls out, which return before the call that made the callback."""
    mod = _user_module(tmp_path)
    steps = count_steps(mod.sink, str(tmp_path / "db.sqlite"), 2)
    assert steps == EXPECTED
    assert not any(s.split(" -> ")[0].startswith(("types.py", "protocol.py", "crash.py")) for s in steps)


def test_step_sequence_is_identical_in_another_process(tmp_path: Path) -> None:
    mod = _user_module(tmp_path)
    here = count_steps(mod.sink, str(tmp_path / "a.sqlite"), 3)
    probe = textwrap.dedent(
        f"""
        import importlib.util, json, sys
        spec = importlib.util.spec_from_file_location("usermod", {str(tmp_path / "usermod.py")!r})
        mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
        from fault_injectors.steps import count_steps
        print(json.dumps(count_steps(mod.sink, sys.argv[1], 3)))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "12345"}
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", probe, str(tmp_path / f"p{i}.sqlite")],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for i in range(2)
    ]
    assert runs[0] == runs[1] == here
    assert len(here) == len(EXPECTED) + 1  # one more row, one more json.dumps


def test_a_fault_lands_just_after_its_step(tmp_path: Path) -> None:
    """Step 2 (CREATE TABLE) took effect; step 3 onwards (the inserts) did not start."""
    mod = _user_module(tmp_path)
    db = str(tmp_path / "db.sqlite")
    seen: list[tuple[int, str]] = []

    def fire(k: int, description: str) -> None:
        seen.append((k, description))
        raise InjectedFault("after step 2")

    with pytest.raises(InjectedFault), StepTracer(Scope.of(mod.sink), {2}, fire):
        mod.sink(db, 2)
    assert seen == [(2, EXPECTED[1])]
    import sqlite3

    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
    conn.close()
    assert sys.getprofile() is None


WITH_CODE = """
import contextlib


def staged(path, log):
    stack = contextlib.ExitStack()
    stack.callback(log.append, "exited")
    with stack:
        log.append("entered")
        try:
            f = open(path, "w")
        except Exception:
            log.append("handled")
        f.close()
"""


@pytest.mark.parametrize("target", [3, 4])
def test_a_raise_after_a_step_surfaces_at_the_next_statement(tmp_path: Path, target: int) -> None:
    """Step 3 is ``ExitStack.__enter__``: raising after it must still exit the ``with`` block (its callback
    runs), as an exception in the next statement would; raising as if ``__enter__`` itself had failed skips
    ``__exit__`` (it left a PostgreSQL COPY open and hung the connection: measured). Step 4 is ``open`` alone
    in a ``try``: the exception comes after the call, outside the ``try``, so ``except`` does not see it."""
    path = tmp_path / "with_user.py"
    path.write_text(WITH_CODE)
    spec = importlib.util.spec_from_file_location("with_user", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    steps = count_steps(mod.staged, str(tmp_path / "probe"), [])
    assert steps[2].endswith("-> contextlib.ExitStack.__enter__") and steps[3].endswith("-> io.open"), steps

    def fire(k: int, description: str) -> None:
        raise InjectedFault(f"after step {k}")

    log: list[str] = []
    with pytest.raises(InjectedFault), StepTracer(Scope.of(mod.staged), {target}, fire):
        mod.staged(str(tmp_path / "f"), log)
    # the fault comes at the next call of the frame (step 3: log.append, in the block; step 4: f.close, after
    # the try), so the with block is exited and the except clause does not see it
    assert log == (["exited"] if target == 3 else ["entered", "exited"])
    assert (tmp_path / "f").exists() == (target == 4), "step 4's effect (the file) happened before the fault"


def test_scope_of_a_sink_in_the_harness_is_its_file_alone() -> None:
    from fault_injectors import sinks

    scope = Scope.of(sinks.load_class)
    assert scope.files == {os.path.realpath(sinks.__file__)} and not scope.dirs


def _site(tmp_path: Path, rules: tuple[FaultRule, ...] = (), census: bool = False) -> FaultSite:
    FaultPlan(rules, census=census).save(tmp_path / "plan.json")
    return FaultSite(tmp_path)


def test_untraced_without_census_or_armed_rule(tmp_path: Path) -> None:
    """A run without step faults pays nothing: the user's function runs without a profiler."""
    site = _site(tmp_path, (FaultRule("a", STEP_POINT, 5, step=1),))
    assert run_with_steps(site, "foreach_batch", sys.getprofile, (), batch=4) is None
    assert not (tmp_path / "census.jsonl").exists()


def test_run_with_steps_records_census_and_fires_with_description(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    mod = _user_module(tmp_path / "code")
    rule = FaultRule("s1", STEP_POINT, 7, action="raise", step=5, wrapper="foreach_batch")
    site = _site(tmp_path, (rule,), census=True)
    run_with_steps(site, "foreach_batch", mod.sink, (str(tmp_path / "a.sqlite"), 2), batch=6)
    with pytest.raises(InjectedFault):
        run_with_steps(site, "foreach_batch", mod.sink, (str(tmp_path / "b.sqlite"), 2), batch=7)
    calls = read_census(tmp_path)
    assert [(c.batch, c.completed) for c in calls] == [(6, True), (7, False)]
    assert list(calls[0].steps) == EXPECTED and list(calls[1].steps) == EXPECTED[:5]
    (record,) = read_ledger(tmp_path)
    assert record["context"]["description"] == EXPECTED[4] and record["context"]["step"] == 5
    # fired once: the rule is spent, a later call of the same batch runs to the end
    run_with_steps(site, "foreach_batch", mod.sink, (str(tmp_path / "c.sqlite"), 2), batch=7)


CURSOR_CODE = """
import sqlite3


def write(db):
    conn = sqlite3.connect(db, isolation_level=None, timeout=0.2)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("CREATE TABLE IF NOT EXISTS t (i INTEGER)")
        names = [r[1] for r in conn.execute("PRAGMA table_info(t)")]
        conn.execute("INSERT INTO t VALUES (?)", (len(names),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()
"""


def test_a_raised_fault_releases_what_the_failed_attempt_held(tmp_path: Path) -> None:
    """A raise after ``execute(PRAGMA ...)`` leaves its cursor un-iterated. PySpark keeps a foreachBatch
    function's last exception (``ForeachBatchFunction.error``), so the traceback's frames would keep that
    cursor, and SQLite's lock, alive: the retry then failed with 'database is locked' (measured). The
    wrapper clears the fault's frames, so a retry in the same process commits."""
    (tmp_path / "code").mkdir()
    path = tmp_path / "code" / "cursor_user.py"
    path.write_text(CURSOR_CODE)
    spec = importlib.util.spec_from_file_location("cursor_user", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    db = str(tmp_path / "db.sqlite")
    steps = count_steps(mod.write, str(tmp_path / "probe.sqlite"))
    k = next(i for i, d in enumerate(steps, 1) if "-> sqlite3.Connection.execute" in d and ":10 " in d)
    site = _site(tmp_path, (FaultRule("s1", STEP_POINT, 0, action="raise", step=k, wrapper="foreach_batch"),))
    held = []
    try:
        run_with_steps(site, "foreach_batch", mod.write, (db,), batch=0)
    except InjectedFault as exc:
        held.append(exc)  # as PySpark does
    assert held, "the fault did not fire"
    mod.write(db)  # the retry: 'database is locked' if the failed attempt's cursor were still alive
    import sqlite3

    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (1,)
    conn.close()


@pytest.mark.parametrize(
    ("rule", "fragment"),
    [
        ({"id": "a", "point": STEP_POINT, "batch": 1}, "field 'step'"),
        ({"id": "a", "point": STEP_POINT, "batch": 1, "step": 0}, "field 'step'"),
        ({"id": "a", "point": STEP_POINT, "batch": 1, "step": 2, "wrapper": "flush"}, "field 'wrapper'"),
        ({"id": "a", "point": "sink.commit.after", "batch": 1, "step": 2}, "belong to point"),
    ],
)
def test_bad_step_rules_are_refused(rule: dict[str, object], fragment: str) -> None:
    with pytest.raises(FaultPlanError, match=fragment):
        FaultRule.from_dict(rule)


def test_step_rule_describes_and_round_trips(tmp_path: Path) -> None:
    rule = FaultRule("k", STEP_POINT, 3, 1, step=7, wrapper="write")
    assert rule.describe() == "kill after step 7 of batch 3 in write, partition 1"
    plan = FaultPlan((rule,), seed=4, census=True)
    plan.save(tmp_path / "p.json")
    assert FaultPlan.load(tmp_path / "p.json") == plan


@pytest.mark.parametrize(
    "text",
    ["sink.step:3:7", "sink.step:3:7:commit", "sink.step:3:7:write:1", "sink.step:0:2@raise", "sink.write.mid:2:1:5"],
)
def test_kill_argument_round_trips_through_parse_kill(text: str) -> None:
    assert kill_argument(parse_kill(text)) == text


def test_replay_command_names_step_kills() -> None:
    spec = RunSpec("s", 1, 0, extra_faults=(FaultRule("x1", STEP_POINT, 2, step=9, wrapper="commit"),))
    assert "--kill sink.step:2:9:commit" in spec.replay_command()


@pytest.mark.parametrize("text", ["sink.step:3", "sink.step:a:1", "sink.step:3:0", "sink.step:1:2:nowhere"])
def test_bad_step_kills_are_refused(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="--kill"):
        parse_kill(text)


def test_census_targets_sample_and_rules() -> None:
    from fault_injectors.steps import CallCensus

    calls = {
        ("commit", 1, None): CallCensus("commit", 1, None, None, ("a.py:1 commit -> os.replace",) * 3, True),
        ("write", 1, 0): CallCensus("write", 1, 0, 0, ("a.py:9 write -> x.y",) * 2, True),
        ("write", 0, 0): CallCensus("write", 0, 0, 0, ("a.py:9 write -> x.y",), True),
    }
    census = Census("s", 1, calls)
    targets = census.targets(1)
    assert [(w, p, k) for w, p, k, _ in targets] == [("commit", None, 1), ("commit", None, 2), ("commit", None, 3),
                                                     ("write", 0, 1), ("write", 0, 2)]  # fmt: skip
    assert sample_targets(targets, 3, seed=2) == sample_targets(targets, 3, seed=2)
    assert sample_targets(targets, None, seed=2) == targets
    rules = step_rules(lambda i: i + 1, targets[3:], "raise")
    assert [(r.batch, r.wrapper, r.partition, r.step) for r in rules] == [(1, "write", 0, 1), (2, "write", 0, 2)]
    assert "batch 1, write, partition 0: 2 step(s)" in census.render()


def test_crash_anywhere_reports_steps_that_drift_from_the_census() -> None:
    from harness.conformance.sink.steps import CENSUS_BATCH, _drift

    chosen = [("foreach_batch", None, 4, "a.py:3 f -> os.replace"), ("foreach_batch", None, 5, "a.py:4 f -> x.y")]
    same = [{"batch": CENSUS_BATCH + i, "context": {"description": c[3]}} for i, c in enumerate(chosen)]
    assert _drift(same, chosen) == []
    moved = [same[0], {"batch": CENSUS_BATCH + 1, "context": {"description": "a.py:9 f -> time.sleep"}}]
    assert _drift(moved, chosen) == [
        f"batch {CENSUS_BATCH + 1} step 5: census 'a.py:4 f -> x.y', at the fault 'a.py:9 f -> time.sleep'"
    ]
