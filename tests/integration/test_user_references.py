"""User references of every kind: a user's ``module:ATTR`` pipelines, through every front end.

Issue "The harness never blames a pipeline for its own miss", point 3. Each module of
``tests/integration/user_modules`` (not a package of this repository: the tests put the directory
on ``PYTHONPATH``) holds a correct pipeline and its one-bug twin over one input kind: the
replayable source, a user's schema on it, Spark's file source, a user's own Python source, Kafka,
a Delta table and a DStream application. Each pair goes through ``run``, ``chaos``, ``replay`` and
the pytest marker, started from a project directory outside the repository. A correct pipeline
must hold (exit 0); a broken one must be caught (exit 1) with the one anomaly kind its bug makes.
A "no verdict" or another kind fails the test.

The default suite keeps one representative: the correct DStream pipeline under ``run`` with one
seeded kill and the default run directory (about 25 s). The rest is the heavy tier (``HARNESS_HEAVY=1``,
``bin/test-heavy``); measured times are in docs/scenarios.md ("User references of every kind").
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.spark.cache import cache_dir
from harness.spark.procs import TOKEN_PREFIX_ENV
from tests.integration.clirun import TOKEN_PREFIX, leftover_processes

pytest_plugins = ["pytester"]

USER_MODULES = Path(__file__).resolve().parent / "user_modules"
#: The user's cache of jars, read before pytester points ``HOME`` elsewhere.
CACHE = cache_dir()
TWINS = ("correct", "broken")
#: Words of a report that gave no verdict.
NO_VERDICT = ("no verdict", "verdict unknown")
VERDICT_LINE = re.compile(r"(exactly-once|violation|no violation|minimal schedule|reproduced)")


@dataclass(frozen=True)
class Pair:
    """A user's correct pipeline and its one-bug twin over one input kind, and how to run them."""

    kind: str
    module: str
    correct: str
    broken: str
    #: The one anomaly kind the broken twin's bug makes.
    anomaly: str
    #: ``run``: seed, rounds and explicit kills of the correct and of the broken twin.
    seed: int
    rounds: int
    correct_kills: tuple[str, ...]
    broken_kills: tuple[str, ...]
    #: ``chaos`` and the pytest marker: campaign seed and examples (profile ``ci``).
    chaos_seed: int
    examples: int

    def ref(self, twin: str) -> str:
        return f"{self.module}:{self.correct if twin == 'correct' else self.broken}"


PAIRS = (
    Pair(
        "replayable", "orders_replayable", "CORRECT", "BROKEN", "duplicate",
        seed=3, rounds=2, correct_kills=("source.read:0", "sink.commit.after:1"),
        broken_kills=("sink.commit.after:1",), chaos_seed=1, examples=2,
    ),
    Pair(
        "user schema", "readings_rows", "CORRECT", "BROKEN", "duplicate",
        seed=3, rounds=2, correct_kills=("after_offsets_logged:0", "sink.commit.after:1"),
        broken_kills=("sink.commit.after:1",), chaos_seed=1, examples=2,
    ),
    Pair(
        "file directory", "clicks_files", "CORRECT", "BROKEN", "duplicate",
        seed=3, rounds=2, correct_kills=("after_offsets_logged:0", "sink.commit.after:1"),
        broken_kills=("sink.commit.after:1",), chaos_seed=1, examples=2,
    ),
    Pair(
        "python source", "meters_source", "CORRECT", "BROKEN", "wrong-value",
        seed=3, rounds=2, correct_kills=("after_offsets_logged:0", "sink.commit.after:1"),
        broken_kills=("sink.commit.after:1",), chaos_seed=1, examples=2,
    ),
    Pair(
        "kafka", "payments_kafka", "CORRECT", "BROKEN", "duplicate",
        seed=3, rounds=2, correct_kills=("after_offsets_logged:0", "sink.commit.after:1"),
        broken_kills=("sink.commit.after:1",), chaos_seed=1, examples=2,
    ),
    Pair(
        "delta source", "ledger_delta", "CORRECT", "BROKEN", "duplicate",
        seed=3, rounds=2, correct_kills=("after_offsets_logged:0", "sink.commit.after:2"),
        broken_kills=("sink.commit.after:1",), chaos_seed=1, examples=2,
    ),
    Pair(
        "dstream", "orders_dstream", "ORDERS", "ORDERS_BY_CLOCK", "duplicate",
        seed=7, rounds=3, correct_kills=(), broken_kills=(), chaos_seed=1, examples=2,
    ),
)  # fmt: skip
DSTREAM = PAIRS[-1]
#: The broken DStream twin's seed in the default suite: three seeded kills that duplicate a batch.
DSTREAM_BROKEN_SEED = 1


def cases(pairs: tuple[Pair, ...] = PAIRS) -> list[Any]:
    """Every pair with each twin, named ``kind-twin``."""
    return [pytest.param(p, t, id=f"{p.kind.replace(' ', '-')}-{t}") for p in pairs for t in TWINS]


def user_env(tmpdir: Path) -> dict[str, str]:
    """A user's shell: the user modules on ``PYTHONPATH``, temp dirs in ``tmpdir``, and the run
    token prefix that lets :func:`leftover_processes` see what the runs started."""
    tmpdir.mkdir(parents=True, exist_ok=True)
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(USER_MODULES), *inherited]),
        TOKEN_PREFIX_ENV: TOKEN_PREFIX,
        "TMPDIR": str(tmpdir),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "HARNESS_CACHE_DIR": str(CACHE),
    }


@dataclass
class Cli:
    """One ``python -m harness`` command and what it gave."""

    code: int
    out: str
    doc: dict[str, Any]

    def show(self) -> str:
        return f"exit {self.code}\n{self.out[-6000:]}"

    def verdict_lines(self) -> str:
        """The report's verdict lines (printed by the tests: ``pytest -rP`` shows them)."""
        lines = [line.strip() for line in self.out.splitlines() if VERDICT_LINE.match(line.strip())]
        return f"exit {self.code}: " + " | ".join(lines)


def harness(project: Path, *args: str, json_path: Path | None = None) -> Cli:
    """``python -m harness *args`` in the user's ``project`` directory (and ``--json``)."""
    project.mkdir(parents=True, exist_ok=True)
    extra = ["--json", str(json_path)] if json_path else []
    proc = subprocess.run(
        [sys.executable, "-m", "harness", *args, *extra],
        cwd=project,
        env=user_env(project / "tmp"),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    doc = json.loads(json_path.read_text()) if json_path and json_path.exists() else {}
    return Cli(proc.returncode, proc.stdout + "\n" + proc.stderr, doc)


def violated_kinds(text: str) -> set[str]:
    """The anomaly kinds of every ``exactly-once violated: 3 duplicate, 1 lost (...)`` line."""
    kinds: set[str] = set()
    for parts in re.findall(r"exactly-once violated: (.+?) \(scenario=", text):
        kinds |= {part.split(" ", 1)[1] for part in parts.split(", ")}
    return kinds


def assert_no_no_verdict(cli: Cli) -> None:
    """Neither a "no verdict" report nor a refusal."""
    assert not any(w in cli.out for w in NO_VERDICT), cli.show()
    assert cli.code != 2, cli.show()


def assert_run_verdict(cli: Cli, pair: Pair, twin: str, kills: int) -> None:
    """``run --json``: the twin's exit code and verdict, every planned kill fired, the broken
    twin's one anomaly kind."""
    print(cli.verdict_lines())
    assert_no_no_verdict(cli)
    doc = cli.doc
    assert len(doc["kills_fired"]) == kills, cli.show()
    assert doc["scenario"] == pair.ref(twin), cli.show()
    if twin == "correct":
        assert cli.code == 0 and doc["verdict"] == "exactly-once", cli.show()
        assert doc["anomalies"] == [], cli.show()
        assert doc["expected_rows"] == doc["observed_rows"] > 0, cli.show()
    else:
        assert cli.code == 1 and doc["verdict"] == "violated", cli.show()
        assert set(doc["anomaly_counts"]) == {pair.anomaly}, cli.show()
        assert violated_kinds(cli.out) == {pair.anomaly}, cli.show()


# -- the default suite: the DStream pair under `run`, default run directory -----------------------


def test_dstream_correct_twin_under_run_with_the_default_run_directory(tmp_path: Path) -> None:
    """``run orders_dstream:ORDERS --kills 1`` holds without ``--run-dir``: the run directory made from the
    reference (a ``:`` in it) works and is removed after the pass. (Before, every batch read nothing under it
    and the correct pipeline was blamed with lost rows.) One kill, for CI time: the heavy tier's broken twin
    takes three."""
    project = tmp_path / "project"
    ok = harness(
        project, "run", DSTREAM.ref("correct"), "--seed", str(DSTREAM.seed), "--kills", "1",
        json_path=tmp_path / "ok.json",
    )  # fmt: skip
    assert_run_verdict(ok, DSTREAM, "correct", kills=1)
    assert ok.doc["run_dir"] is None, ok.show()
    assert not [p.name for p in (project / "tmp").glob("harness-*")], ok.show()  # removed after the pass
    assert leftover_processes() == []


@pytest.mark.heavy  # CI time: test_dstreams.py's naive foreachRDD is the default suite's DStream twin caught
def test_dstream_broken_twin_under_run_keeps_its_run_directory(tmp_path: Path) -> None:
    """``run orders_dstream:ORDERS_BY_CLOCK --kills 3`` is caught with duplicates, each located in its batch
    after a kill; its run directory is kept, named without the ``:``."""
    project = tmp_path / "project"
    bad = harness(
        project, "run", DSTREAM.ref("broken"), "--seed", str(DSTREAM_BROKEN_SEED), "--kills", "3",
        json_path=tmp_path / "bad.json",
    )  # fmt: skip
    assert_run_verdict(bad, DSTREAM, "broken", kills=3)
    kept = Path(bad.doc["run_dir"])
    assert kept.parent == project / "tmp", kept
    assert kept.name.startswith("harness-orders_dstream-ORDERS_BY_CLOCK-"), kept
    assert ":" not in kept.name and (kept / "checkpoint").is_dir(), kept
    dupes = bad.doc["anomalies"]
    assert dupes and all(a["batch_id"] is not None and a["fault"] for a in dupes), bad.show()
    assert leftover_processes() == []


# -- the heavy tier: every kind x every front end x both twins ------------------------------------


@pytest.mark.heavy
@pytest.mark.parametrize(("pair", "twin"), cases(PAIRS[:-1]))
def test_run(pair: Pair, twin: str, tmp_path: Path) -> None:
    """``run MODULE:ATTR --seed S --kill POINT:BATCH ...``: the correct twin holds, the broken one
    is caught with its anomaly kind. (The DStream pair's ``run`` is the default suite's test.)"""
    kills = pair.correct_kills if twin == "correct" else pair.broken_kills
    args = ["run", pair.ref(twin), "--seed", str(pair.seed), "--rounds", str(pair.rounds)]
    args += [a for k in kills for a in ("--kill", k)]
    cli = harness(tmp_path / "project", *args, json_path=tmp_path / "run.json")
    assert_run_verdict(cli, pair, twin, kills=len(kills))
    assert leftover_processes() == []


def chaos_args(pair: Pair, twin: str) -> list[str]:
    return [
        "chaos", pair.ref(twin), "--examples", str(pair.examples), "--seed", str(pair.chaos_seed),
        "--profile", "ci", "--shrink-budget", "60",
    ]  # fmt: skip


def assert_campaign(cli: Cli, pair: Pair, twin: str) -> None:
    """``chaos --json``: the twin's exit code and verdict; the broken twin's one anomaly kind and
    its bundle."""
    print(cli.verdict_lines())
    assert_no_no_verdict(cli)
    doc = cli.doc
    assert doc["error"] is None, cli.show()
    if twin == "correct":
        assert cli.code == 0 and doc["verdict"] == "exactly-once", cli.show()
        assert doc["examples"] == pair.examples and doc["faults_fired"] >= 1, cli.show()
    else:
        assert cli.code == 1 and doc["verdict"] == "violated", cli.show()
        assert set(doc["failure"]["anomaly_counts"]) == {pair.anomaly}, cli.show()
        assert violated_kinds(cli.out) == {pair.anomaly}, cli.show()
        assert len(doc["minimal_faults"]) == 1, cli.show()  # shrunk to one fault step
        assert (Path(doc["bundle"]) / "bundle.json").is_file(), cli.show()


class BrokenCampaigns:
    """Each broken twin's campaign, run once for the module: ``test_chaos`` checks it and
    ``test_replay`` replays its bundle."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.done: dict[str, Cli] = {}

    def get(self, pair: Pair) -> Cli:
        if pair.kind not in self.done:
            work = self.root / pair.module
            args = chaos_args(pair, "broken")
            self.done[pair.kind] = harness(work / "project", *args, json_path=work / "chaos.json")
        return self.done[pair.kind]


@pytest.fixture(scope="module")
def broken_campaigns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokenCampaigns]:
    yield BrokenCampaigns(tmp_path_factory.mktemp("broken-campaigns"))
    assert leftover_processes() == []


@pytest.mark.heavy
@pytest.mark.parametrize(("pair", "twin"), cases())
def test_chaos(pair: Pair, twin: str, tmp_path: Path, broken_campaigns: BrokenCampaigns) -> None:
    """``chaos MODULE:ATTR --examples N --seed S --profile ci``: the correct twin holds every
    example; the broken twin's violation is found, shrunk and bundled, with its anomaly kind."""
    if twin == "broken":
        cli = broken_campaigns.get(pair)
    else:
        args = chaos_args(pair, twin)
        cli = harness(tmp_path / "project", *args, json_path=tmp_path / "chaos.json")
    assert_campaign(cli, pair, twin)
    assert leftover_processes() == []


def fixed_bundle(bundle: Path, dest: Path, ref: str) -> Path:
    """The bundle with its scenario replaced by ``ref``: the user fixed the pipeline and replays
    the schedule that broke it."""
    doc = json.loads((bundle / "bundle.json").read_text())
    doc["scenario"] = doc["spec"]["scenario"] = ref
    dest.mkdir(parents=True)
    (dest / "bundle.json").write_text(json.dumps(doc, indent=2))
    return dest


@pytest.mark.heavy
@pytest.mark.parametrize(("pair", "twin"), cases())
def test_replay(pair: Pair, twin: str, tmp_path: Path, broken_campaigns: BrokenCampaigns) -> None:
    """``replay BUNDLE --times 1`` of the broken twin's bundle reproduces its violation (exit 1);
    the same schedule on the correct twin (the user's fix) holds (exit 0)."""
    campaign = broken_campaigns.get(pair)
    assert_campaign(campaign, pair, "broken")
    bundle = Path(campaign.doc["bundle"])
    if twin == "correct":
        bundle = fixed_bundle(bundle, tmp_path / "fixed", pair.ref("correct"))
    args = ["replay", str(bundle), "--times", "1"]
    cli = harness(tmp_path / "project", *args, json_path=tmp_path / "replay.json")
    print(cli.verdict_lines())
    assert_no_no_verdict(cli)
    if twin == "correct":
        assert cli.code == 0 and cli.doc["verdict"] == "exactly-once", cli.show()
        assert cli.doc["anomalies"] == [], cli.show()
    else:
        assert cli.code == 1 and "reproduced 1/1 time(s)" in cli.out, cli.show()
        assert cli.doc["verdict"] == "violated", cli.show()
        assert set(cli.doc["anomaly_counts"]) == {pair.anomaly}, cli.show()
    recorded = json.loads((bundle / "bundle.json").read_text())["kills_fired"]
    assert len(cli.doc["kills_fired"]) == len(recorded), cli.show()  # the same faults fired
    assert leftover_processes() == []


USER_TEST = """
import pytest


@pytest.mark.chaos(scenario="{ref}", examples={examples}, profile="ci", seed={seed})
def test_my_pipeline_is_exactly_once(chaos_run):
    chaos_run().assert_exactly_once()
"""


@pytest.fixture
def user_pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """Pytester in a user's shell (:func:`user_env`)."""
    for name, value in user_env(pytester.path / "tmp").items():
        if os.environ.get(name) != value:
            monkeypatch.setenv(name, value)
    return pytester


@pytest.mark.heavy
@pytest.mark.parametrize(("pair", "twin"), cases())
def test_pytest_marker(pair: Pair, twin: str, user_pytester: pytest.Pytester) -> None:
    """A user's test file with ``@pytest.mark.chaos(scenario="module:ATTR", ...)``, run by
    pytest: it passes for the correct twin and fails for the broken one, naming its anomaly kind."""
    pytester = user_pytester
    ref = pair.ref(twin)
    test = USER_TEST.format(ref=ref, examples=pair.examples, seed=pair.chaos_seed)
    pytester.makepyfile(test_user=test)
    xml = pytester.path / "out.xml"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--harness-strict", f"--junitxml={xml}", timeout=1800
    )
    out = result.stdout.str()
    shown = f"exit {result.ret}\n{out[-6000:]}"
    print(Cli(result.ret, out, {}).verdict_lines(), result.parseoutcomes())
    assert not any(w in out for w in NO_VERDICT), shown
    props = {p.get("name"): p.get("value") for p in ET.parse(xml).getroot().iter("property")}
    assert props["scenario"] == ref and props["seed"] == str(pair.chaos_seed), props
    if twin == "correct":
        assert result.ret == 0 and props["verdict"] == "exactly-once", shown
        result.assert_outcomes(passed=1)
    else:
        assert result.ret == 1 and props["verdict"] == "violated", shown
        result.assert_outcomes(failed=1)
        assert violated_kinds(out) == {pair.anomaly}, shown
        assert (Path(str(props["bundle"])) / "bundle.json").is_file(), props
    assert leftover_processes() == []
