"""pytest plugin of the exactly-once harness (entry point ``pytest11``).

Fixtures: ``spark`` (one session-scoped SparkSession per worker, small test
settings, the ``replayable`` source registered, Spark's Kafka connector on its
``spark.jars`` when set-up cached it), ``replayable_source`` (a tap
plus stream/batch readers of the deterministic source), ``kafka_broker`` (one
session-scoped throw-away Kafka broker per worker), ``chaos_run`` (runs a
chaos campaign for the test's ``chaos`` marker and returns its result).
Options (group ``harness``): ``--harness-seed``, ``--harness-profile``,
``--harness-examples``, ``--harness-volume ROWS``, ``--harness-replay PATH``. A failed test that ran a
campaign gets a "harness chaos" report section with the summary and the
replay command. Failures are saved (bundle paths under
``.harness/failures``) and rerun first on the next run, before any new
example. pyspark is imported only when a fixture needs it.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from harness.engine.commandline import harness_command, shell_line

if TYPE_CHECKING:
    from pluggy import Result
    from pyspark.sql import SparkSession

    from harness.chaos.result import CampaignResult
    from harness.testing import ReplayableSource
    from scenarios.kafka.broker import KafkaBroker

FAILURES_DIR = Path(".harness") / "failures"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "exactly-once harness (chaos campaigns)")
    group.addoption("--harness-seed", type=int, default=None, help="campaign seed (default: random, printed)")
    group.addoption("--harness-profile", default=None, help="dev | ci | nightly (default: $HARNESS_PROFILE or dev)")
    group.addoption("--harness-examples", type=int, default=None, help="override the number of examples")
    group.addoption(
        "--harness-volume", type=int, default=None, metavar="ROWS", help="rows per example (the marker's volume=)"
    )
    group.addoption("--harness-replay", default=None, metavar="PATH", help="replay this bundle instead of a campaign")
    group.addoption(
        "--harness-shard",
        default=None,
        metavar="I/N",
        help="each chaos_run campaign runs only shard I of N of its examples (the N shards together run each once)",
    )
    group.addoption(
        "--harness-database",
        default=None,
        metavar="DIR|redis://...",
        help="Hypothesis example database the campaigns share across shards and reruns (failures replayed first)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "chaos(scenario, examples=None, profile=None, nemesis=()): run a chaos campaign on `scenario` (a registered "
        "name or 'package.module:ATTRIBUTE') through the chaos_run fixture; chaos(source=, context=, options=, "
        "examples=, profile=) runs one over a Python DataSource (the class or 'path.py:Class') fed by `context`",
    )
    _shard_option(config)  # a bad --harness-shard or --harness-database stops the session before any test
    _database_option(config)


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One SparkSession per worker (local[2], 2 shuffle partitions, UI off)."""
    from harness.spark.session import build_session

    session = build_session("harness-tests")
    yield session
    session.stop()


@pytest.fixture
def replayable_source(spark: SparkSession, tmp_path: Path) -> ReplayableSource:
    """A deterministic source with a tap in ``tmp_path``: ``add({0: 10})`` makes
    data available, ``stream()`` / ``batch()`` read it."""
    from harness.testing import ReplayableSource

    return ReplayableSource(spark, tmp_path / "replayable")


#: How a fixture's skip for an absent component begins (the suite's CI fails such skips: tests/ci_skips.py).
MISSING_PREFIX = "missing component: "


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """One throw-away single-node Kafka broker per worker, started on first use and stopped at the end of
    the session (:func:`scenarios.kafka.broker.throwaway_kafka`; its log is ``kafka.log`` in its temp
    directory). Tests share it: each should use topics of its own. Skips, saying what to install or run,
    when the broker cannot start here."""
    from scenarios.base import ResourceUnavailable
    from scenarios.kafka.broker import throwaway_kafka

    running = throwaway_kafka(tmp_path_factory.mktemp("kafka-broker"))
    try:
        broker = running.__enter__()
    except ResourceUnavailable as exc:
        pytest.skip(f"{MISSING_PREFIX}Kafka broker unavailable: {exc}")
    try:
        yield broker
    finally:
        running.__exit__(None, None, None)


def _failure_file(nodeid: str) -> Path:
    return FAILURES_DIR / f"{hashlib.sha1(nodeid.encode()).hexdigest()[:16]}.json"


def _saved_bundle(record: Path) -> Path | None:
    """The bundle of a failure saved by an earlier run of the same test, if it still exists."""
    try:
        bundle = Path(json.loads(record.read_text())["bundle"])
    except (OSError, ValueError, KeyError):
        return None
    return bundle if bundle.exists() else None


def _keep(bundle: Path, keep: Path) -> Path:
    """``bundle`` copied to ``keep`` atomically (a copy beside it, then a rename); ``keep``."""
    if keep != bundle.resolve():
        staged = keep.with_name(f".{keep.name}.{os.getpid()}")
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(bundle, staged)
        shutil.rmtree(keep, ignore_errors=True)
        os.replace(staged, keep)
    return keep


def _save_failure(record: Path, nodeid: str, bundle: Path) -> Path:
    """Copy ``bundle`` under ``.harness/bundles`` (tmp dirs do not last) and remember it for ``nodeid``.
    Both are keyed by the test id and written atomically (a copy beside them, then a rename), so pytest-xdist
    workers, or a run cut short, never leave another test's record or a half-written one."""
    keep = _keep(bundle, (Path(".harness") / "bundles" / record.stem).resolve())
    record.parent.mkdir(parents=True, exist_ok=True)
    tmp = record.with_name(f".{record.name}.{os.getpid()}")
    tmp.write_text(json.dumps({"nodeid": nodeid, "bundle": str(keep)}))
    os.replace(tmp, record)
    return keep


@pytest.fixture
def chaos_run(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., CampaignResult]:
    """``chaos_run(**overrides)`` runs the campaign the ``chaos`` marker describes
    (keyword overrides win) and returns a ``CampaignResult``; call
    ``result.assert_exactly_once()`` (or inspect ``result.verdict``).
    A failure saved by an earlier run of this test is replayed first; if it
    still fails, that is the result; if not, it is forgotten and the campaign runs."""

    def run(**overrides: Any) -> CampaignResult:
        from harness.chaos.campaign import replay_bundle_campaign, run_campaign
        from harness.chaos.profiles import get_profile

        marker = request.node.get_closest_marker("chaos")
        spec: dict[str, Any] = {**(marker.kwargs if marker else {}), **overrides}
        if marker and marker.args and "scenario" not in spec:
            spec["scenario"] = marker.args[0]
        if ("scenario" in spec) == ("source" in spec):
            raise pytest.UsageError(
                "chaos_run needs @pytest.mark.chaos(scenario=...) or @pytest.mark.chaos(source=..., context=...) "
                "(or the same keywords to chaos_run), one of the two"
            )
        opt = request.config.getoption
        profile = get_profile(opt("--harness-profile") or spec.get("profile"))
        profile = profile.with_examples(opt("--harness-examples") or spec.get("examples"))
        profile = profile.with_volume(opt("--harness-volume") or spec.get("volume"), spec.get("batch_rows"))
        seed = opt("--harness-seed")
        seed = seed if seed is not None else spec.get("seed", random.SystemRandom().randrange(2**31))
        record = _failure_file(request.node.nodeid)
        explicit = opt("--harness-replay")
        first = Path(explicit) if explicit else _saved_bundle(record)
        result: Any = None
        if first is not None:
            replay_dir = Path(tempfile.mkdtemp(prefix="replay-", dir=tmp_path))
            if _is_source_bundle(first):
                from harness.conformance.source.campaign import replay_saved

                result = replay_saved(first, profile, replay_dir)
            else:
                result = replay_bundle_campaign(first, profile, replay_dir)
            if not result.failure and not explicit:
                record.unlink(missing_ok=True)  # the saved failure no longer reproduces
                result = None
        work_dir = Path(tempfile.mkdtemp(prefix="chaos-", dir=tmp_path))  # a new one per call
        shard = _shard_option(request.config)
        if result is None and "source" in spec and shard is not None and shard.index != 1:
            pytest.skip(f"a campaign over a source is not split into shards: shard 1/{shard.count} runs it whole")
        if result is None and shard is not None:
            from harness.chaos.shards import idle_shard_message, shard_blocks

            if opt("--harness-seed") is None and "seed" not in spec:
                pytest.fail(
                    f"--harness-shard {shard} needs a seed every shard shares: give --harness-seed N "
                    "(or seed= on the chaos marker)",
                    pytrace=False,
                )
            if "scenario" in spec and not shard_blocks(seed, profile.examples, shard):
                pytest.skip(idle_shard_message(profile.examples, shard))
        if result is None and "source" in spec:
            from harness.conformance.source.campaign import run_source_campaign
            from harness.conformance.source.schedule import SourceSubject, as_ref

            options = {str(k): str(v) for k, v in spec.get("options", {}).items()}
            subject = SourceSubject(as_ref(spec["source"]), as_ref(spec.get("context")), options)
            result = run_source_campaign(
                subject, seed_value=seed, profile=profile, work_dir=work_dir, echo=lambda m: None
            )
        elif result is None:
            result = run_campaign(
                spec["scenario"],
                seed_value=seed,
                profile=profile,
                work_dir=work_dir,
                nemesis=tuple(spec.get("nemesis", ())),
                shard=shard,
                database=_database_option(request.config),
            )
        if result.bundle:
            result.bundle = _save_failure(record, request.node.nodeid, result.bundle)
            if getattr(result, "fault_free", None):  # the failure's fault-free twin (harness.chaos.faultfree)
                result.fault_free = _keep(
                    result.fault_free, result.bundle.with_name(f"{result.bundle.name}-fault-free")
                )
        request.node.stash[RESULT_KEY] = result
        _record_properties(request, result, profile.name)
        # A source campaign's result is a SourceCampaignResult, with the fields a test reads of a CampaignResult.
        return cast("CampaignResult", result)

    return run


RESULT_KEY = pytest.StashKey[Any]()


def _shard_option(config: pytest.Config) -> Any:
    """``--harness-shard I/N`` as a :class:`harness.chaos.shards.Shard` (``None`` without it); a usage error
    naming the expected form otherwise."""
    from harness.chaos.shards import Shard

    text = config.getoption("--harness-shard")
    try:
        return Shard.parse(text) if text else None
    except ValueError as exc:
        raise pytest.UsageError(f"--harness-shard: {exc}") from None


def _database_option(config: pytest.Config) -> Any:
    """``--harness-database`` once it opens (``None`` without it); a usage error saying what is wrong otherwise."""
    from harness.chaos.database import DatabaseError, open_database

    where = config.getoption("--harness-database")
    try:
        if where:
            open_database(where)
        return where
    except DatabaseError as exc:
        raise pytest.UsageError(str(exc)) from None


def _is_source_bundle(bundle: Path) -> bool:
    """Whether ``bundle`` was written by a campaign over a source (``"kind": "source"``)."""
    try:
        return bool(json.loads((bundle / "bundle.json").read_text()).get("kind") == "source")
    except (OSError, ValueError, AttributeError):
        return False


def _record_properties(request: pytest.FixtureRequest, result: Any, profile: str) -> None:
    """The campaign's seed, profile, scenario, bundle and replay command as the test's JUnit properties
    (``record_property``), so ``pytest --junitxml`` shows a CI dashboard how to rerun a failure."""
    if result.bundle:
        replay = harness_command("replay", result.bundle)
    else:
        seeded = ["--harness-seed", result.seed, "--harness-profile", profile]
        replay = shell_line(["pytest", request.node.nodeid, *seeded])
    props = {
        "seed": result.seed,
        "profile": profile,
        "scenario": result.subject_name,
        "verdict": result.verdict,
        "bundle": str(result.bundle or ""),
        "replay": replay,
    }
    kept = [(k, v) for k, v in request.node.user_properties if k not in props]  # a later campaign's wins
    request.node.user_properties[:] = [*kept, *props.items()]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    report = outcome.get_result()
    result = item.stash.get(RESULT_KEY, None)
    if report.when == "call" and report.failed and result is not None:
        report.sections.append(("harness chaos", result.render()))
