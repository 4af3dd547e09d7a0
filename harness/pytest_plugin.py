"""pytest plugin of the exactly-once harness (entry point ``pytest11``).

Fixtures: ``spark`` (one session-scoped SparkSession per worker, small test
settings, the ``replayable`` source registered, Spark's Kafka connector on its
``spark.jars`` when set-up cached it), ``replayable_source`` (a tap
plus stream/batch readers of the deterministic source), ``kafka_broker`` (one
session-scoped throw-away Kafka broker per worker), ``chaos_run`` (runs a
chaos campaign for the test's ``chaos`` marker and returns its result; the campaigns of one session share one
driver pool per master, so a test after the first starts on a live driver).
Options (group ``harness``): ``--harness-seed``, ``--harness-profile``,
``--harness-examples``, ``--harness-volume ROWS``, ``--harness-replay PATH``, ``--harness-strict``; ini
options ``harness_master``, ``harness_spark_confs``, ``harness_packages``, ``harness_cache_dir``,
``harness_offline``, ``harness_strict`` (:mod:`harness.plugin.settings`). A missing Java, jar set or
broker skips the test with its reason (fails it under ``--harness-strict`` or ``CI=true``). A failed test that
ran a campaign gets a "harness chaos" report section with the summary, where its bundle and run directory
were kept, and the replay command. Failures are saved (:mod:`harness.plugin.failures`) and rerun first on
the next run, before any new example. pyspark is imported only when a fixture needs it.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from harness.engine.commandline import harness_command, shell_line
from harness.plugin import settings
from harness.plugin.failures import copy_atomically, failure_file, keep_failure, kept_lines, saved_bundle
from harness.plugin.settings import MISSING_PREFIX, missing_component

if TYPE_CHECKING:
    from pluggy import Result
    from pyspark.sql import SparkSession

    from harness.chaos.result import CampaignResult
    from harness.engine.pool import DriverPool
    from harness.testing import ReplayableSource
    from scenarios.kafka.broker import KafkaBroker


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
    settings.add_options(parser, group)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "chaos(scenario, examples=None, profile=None, nemesis=()): run a chaos campaign on `scenario` (a registered "
        "name or 'package.module:ATTRIBUTE') through the chaos_run fixture; chaos(source=, context=, options=, "
        "examples=, profile=) runs one over a Python DataSource (the class or 'path.py:Class') fed by `context`",
    )
    _shard_option(config)  # a bad --harness-shard or --harness-database stops the session before any test
    _database_option(config)
    settings.configure(config)
    from fault_injectors.plugins import PluginError, plugin_actions

    try:  # a broken plugin of the harness stops the session in one line, as the command line refuses it
        plugin_actions()
    except PluginError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config: pytest.Config) -> str:
    """The PySpark release the session's campaigns run on, so that a CI log says which one was tested (read from
    the installed package's metadata: nothing of pyspark is imported)."""
    from importlib.metadata import PackageNotFoundError, version

    from harness.spark.releases import SUPPORTED, unsupported

    try:
        found = version("pyspark")
    except PackageNotFoundError:
        return "harness: no pyspark package installed"
    return f"harness: PySpark {found}" + ("" if unsupported(found) is None else f", outside {SUPPORTED}")


@pytest.fixture(scope="session")
def spark(pytestconfig: pytest.Config) -> Iterator[SparkSession]:
    """One SparkSession per worker (``harness_master``, default local[2]; 2 shuffle partitions, UI off; the
    cached connectors, the team's packages and ``harness_spark_confs``)."""
    from harness.spark.jars import JarsUnavailable
    from harness.spark.session import build_session

    if reason := settings.java_problem():
        missing_component(pytestconfig, reason)
    try:
        session = build_session("harness-tests", master=settings.master(pytestconfig))
    except JarsUnavailable as exc:
        missing_component(pytestconfig, str(exc))
    yield session
    session.stop()


@pytest.fixture
def replayable_source(spark: SparkSession, tmp_path: Path) -> ReplayableSource:
    """A deterministic source with a tap in ``tmp_path``: ``add({0: 10})`` makes
    data available, ``stream()`` / ``batch()`` read it."""
    from harness.testing import ReplayableSource

    return ReplayableSource(spark, tmp_path / "replayable")


__all__ = ["MISSING_PREFIX"]


@pytest.fixture(scope="session")
def kafka_broker(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """One throw-away single-node Kafka broker per worker, started on first use and stopped at the end of
    the session (:func:`scenarios.kafka.broker.throwaway_kafka`; its log is ``kafka.log`` in its temp
    directory). Tests share it: each should use topics of its own. Skips, saying what to install or run,
    when the broker cannot start here (fails under ``--harness-strict`` or ``CI=true``)."""
    from scenarios.base import ResourceUnavailable
    from scenarios.kafka.broker import throwaway_kafka

    running = throwaway_kafka(tmp_path_factory.mktemp("kafka-broker"))
    try:
        broker = running.__enter__()
    except ResourceUnavailable as exc:
        missing_component(pytestconfig, f"Kafka broker unavailable: {exc}")
    try:
        yield broker
    finally:
        running.__exit__(None, None, None)


@pytest.fixture(scope="session")
def _harness_pools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], DriverPool]]:
    """The session's driver pools, one per master, each a campaign's own pool made on first use and closed at the
    end of the session: the first campaign pays a driver's start, the next ones find it live (11-15 s less per
    test here). Under pytest-xdist each worker has its own."""
    pools: dict[str, DriverPool] = {}

    def pool_for(master: str) -> DriverPool:
        if master not in pools:
            from harness.chaos.campaign import campaign_pool

            pools[master] = campaign_pool(tmp_path_factory.mktemp("harness-pool"), master)
        return pools[master]

    try:
        yield pool_for
    finally:
        for pool in pools.values():
            pool.close()


@pytest.fixture
def chaos_run(
    request: pytest.FixtureRequest, tmp_path: Path, _harness_pools: Callable[[str], DriverPool]
) -> Callable[..., CampaignResult]:
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
        _preflight(request.config, spec)
        record = failure_file(request.node.nodeid)
        explicit = opt("--harness-replay")
        first = Path(explicit) if explicit else saved_bundle(record)
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
            master = settings.master(request.config)
            result = run_campaign(
                spec["scenario"],
                seed_value=seed,
                profile=profile,
                work_dir=work_dir,
                nemesis=tuple(spec.get("nemesis", ())),
                shard=shard,
                database=_database_option(request.config),
                master=master,
                pool=_harness_pools(master),
            )
        kept_run: Path | None = None
        if result.bundle:
            run_dir = (getattr(result, "failure_report", None) or {}).get("run_dir")
            result.bundle, kept_run = keep_failure(
                record, request.node.nodeid, result.bundle, Path(run_dir) if run_dir else None
            )
            if getattr(result, "fault_free", None):  # the failure's fault-free twin (harness.chaos.faultfree)
                result.fault_free = copy_atomically(
                    result.fault_free, result.bundle.with_name(f"{result.bundle.name}-fault-free")
                )
        request.node.stash[RESULT_KEY] = result
        request.node.stash[KEPT_KEY] = (result.bundle, kept_run)
        _record_properties(request, result, profile.name)
        # A source campaign's result is a SourceCampaignResult, with the fields a test reads of a CampaignResult.
        return cast("CampaignResult", result)

    return run


RESULT_KEY = pytest.StashKey[Any]()
#: Where a failing campaign's bundle and minimal failing run directory were kept.
KEPT_KEY = pytest.StashKey[tuple[Path | None, Path | None]]()


def _preflight(config: pytest.Config, spec: dict[str, Any]) -> None:
    """Skip (or fail, when strict) before anything starts when Java, a jar set the scenario needs, the team's
    packages or the Kafka broker's jars are missing."""
    if reason := settings.java_problem():
        missing_component(config, reason)
    if "scenario" not in spec:
        return
    from scenarios import get_scenario
    from scenarios.kafka.preflight import scenario_problem

    try:
        scenario = get_scenario(spec["scenario"])
    except KeyError as exc:
        raise pytest.UsageError(str(exc.args[0])) from None
    if reason := scenario_problem(scenario):
        missing_component(config, reason)


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
        where = kept_lines(*item.stash.get(KEPT_KEY, (None, None)))
        report.sections.append(("harness chaos", "\n".join([result.render(), *where])))
