"""pytest base classes: a connector's own test suite runs the whole kit in a few lines.

    from harness.conformance.pytest_kit import SinkConformance, SourceConformance

    class TestMySource(SourceConformance):
        source = MyDataSource            # a DataSource subclass
        context = my_context_factory     # optional: feeds test data (see harness.sources.contexts)
        options = {"region": "test"}     # optional

    class TestMySink(SinkConformance):
        sink = MySinkDataSource          # or a foreachBatch factory factory(path, **options)
        read_back = read_my_sink         # read_back(path) -> rows (dicts) readers see
        guarantee = "exactly-once"       # or "at-least-once"

Each subclass gets one test per check id (``test_check[offsets-json]``, ...):
the checks run once per class (class-scoped fixture), each test then reports
its check: passed, failed with the evidence and the fix, or skipped with the
reason. Optional attributes: ``skip`` (check ids), sources ``end_to_end``
(default True), ``kills`` and ``chaos_examples`` (an opt-in chaos campaign over the source, with
``chaos_profile`` and ``seed``); sinks ``faults`` (``mixed`` | ``soft`` |
``hard``), ``points``, ``crash_points`` (default True) and ``steps`` (kills of
``crash-anywhere``, default 30; ``None``: every step of the census batch) and
``wrappers`` (the wrapped functions it aims at; default all), ``seed`` (default 5).
Every test records its subject, check, status, seed, profile, kept work directory
and replay command as JUnit properties (``pytest --junitxml``), and a failing check's
message ends with its seed and rerun command. Under pytest-xdist the checks of a class
still run once per session (:func:`shared_report`), whichever worker its tests land on.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.conformance.results import CheckOutcome, ConformanceReport
from harness.conformance.sink.suite import SINK_CHECK_IDS
from harness.conformance.source.suite import SOURCE_CHECK_IDS
from harness.engine.commandline import harness_command, shell_line

#: The seed of a sink's fault schedule and step sample unless the class sets ``seed`` (``check_sink``'s default).
SINK_SEED = 5


def _attr(cls: type, name: str, default: Any = None) -> Any:
    """A class attribute as written (a function stays a function, not a bound method)."""
    try:
        value = inspect.getattr_static(cls, name)
    except AttributeError:
        return default
    return value.__func__ if isinstance(value, staticmethod | classmethod) else value


def kit_check(
    record: Callable[[str, object], None], nodeid: str, report: ConformanceReport, check_id: str, seed: int | None
) -> None:
    """Record the check's subject, id, status, seed, profile (``conformance``), kept work directory and replay
    command as JUnit properties (``record_property``, so ``pytest --junitxml`` shows a CI dashboard how to rerun
    it), then turn the check into the test's outcome (:func:`report_check`)."""
    result = report.by_id(check_id)
    kept = next((d.split("kept: ", 1)[1] for d in result.details if "directory kept: " in d), "")
    props = {
        "subject": report.subject,
        "check": check_id,
        "status": result.status,
        "seed": "" if seed is None else seed,
        "profile": "conformance",
        "bundle": kept,
        "replay": shell_line(["pytest", nodeid]),
    }
    for key, value in props.items():
        record(key, value)
    seeded = "no seed (deterministic checks)" if seed is None else f"seed {seed}"
    report_check(result, f"{seeded}; rerun: {shell_line(['pytest', nodeid])}")


def shared_report(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    compute: Callable[[Path], ConformanceReport],
) -> ConformanceReport:
    """The class's report, computed once per test session in a new work directory: under pytest-xdist the
    first worker to need it computes it (under a file lock in the session's shared temp directory) and every
    other worker that runs one of the class's tests reads it, so no check (and no SIGKILL run) is repeated
    whichever way ``--dist`` spreads the tests."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return compute(tmp_path_factory.mktemp(request.node.name))
    shared = tmp_path_factory.getbasetemp().parent / "harness-kit-reports"
    shared.mkdir(exist_ok=True)
    key = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    done = shared / f"{key}.json"
    with open(shared / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if compute raises
        if done.exists():
            return ConformanceReport.from_json(json.loads(done.read_text()))
        report = compute(tmp_path_factory.mktemp(request.node.name))  # only the worker that runs the checks
        tmp = done.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(report.dumps())
        os.replace(tmp, done)
        return report


def report_check(result: CheckOutcome, rerun: str = "") -> None:
    """Turn one check result into a pytest outcome (a failure ends with ``rerun``: its seed and command)."""
    if result.status == "skip":
        pytest.skip(f"{result.id}: {result.summary}")
    if result.status in ("fail", "error"):
        lines = [f"{result.id} {result.status}: {result.summary}", *(f"  - {d}" for d in result.details)]
        if result.fix:
            lines.append(f"  fix: {result.fix}")
        if result.rows:
            lines.append(result.rows)
        if rerun:
            lines.append(rerun)
        pytest.fail("\n".join(lines), pytrace=False)


class SourceConformance:
    """Base class for a source's conformance tests (set ``source``; see the module docstring)."""

    source: Any = None

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_report(
        cls, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[ConformanceReport]:
        from harness.conformance.source.suite import check_source

        source = _attr(cls, "source")
        if source is None:
            pytest.fail(f"{cls.__name__}: set the class attribute 'source' to your DataSource subclass", pytrace=False)
        yield shared_report(
            request,
            tmp_path_factory,
            lambda workdir: check_source(
                source,
                _attr(cls, "options", {}),
                _attr(cls, "context"),
                workdir=workdir,
                skip=_attr(cls, "skip", ()),
                end_to_end=_attr(cls, "end_to_end", True),
                kills=_attr(cls, "kills", 2),
                echo=lambda m: None,
            ),
        )

    @pytest.mark.parametrize("check_id", SOURCE_CHECK_IDS)
    def test_check(
        self,
        conformance_report: ConformanceReport,
        check_id: str,
        record_property: Callable[[str, object], None],
        request: pytest.FixtureRequest,
    ) -> None:
        kit_check(record_property, request.node.nodeid, conformance_report, check_id, None)

    def test_chaos(
        self,
        record_property: Callable[[str, object], None],
        request: pytest.FixtureRequest,
        tmp_path_factory: pytest.TempPathFactory,
    ) -> None:
        """A chaos campaign over the source (``chaos --source``), opt-in: ``chaos_examples = N`` (it costs one
        end-to-end run per example, a JVM per kill); ``chaos_profile`` (default ``ci``) and ``seed`` (default 1).
        Without a ``context`` the source's data must arrive by itself: the campaign draws the batches each round
        lets it plan instead of rows (a replay of its bundle reproduces the schedule, not the same rows)."""
        from harness.chaos.profiles import get_profile
        from harness.conformance.source.campaign import run_source_campaign
        from harness.conformance.source.schedule import SourceSubject, as_ref

        cls = type(self)
        examples = _attr(cls, "chaos_examples", 0)
        seed = _attr(cls, "seed", 1)
        options = {str(k): str(v) for k, v in _attr(cls, "options", {}).items()}
        subject = SourceSubject(as_ref(_attr(cls, "source")), as_ref(_attr(cls, "context")), options)
        if not examples:
            for key, value in {"subject": subject.source, "check": "chaos", "status": "skip", "seed": seed}.items():
                record_property(key, value)
            pytest.skip("chaos: opt-in, set chaos_examples = N on the class (one end-to-end run per example)")
        profile = get_profile(_attr(cls, "chaos_profile", "ci")).with_examples(examples)
        work = tmp_path_factory.mktemp(f"{cls.__name__}-chaos")
        result = run_source_campaign(subject, seed_value=seed, profile=profile, work_dir=work, echo=lambda m: None)
        props = {"subject": subject.source, "check": "chaos", "status": result.verdict, "seed": seed}
        props |= {"profile": profile.name, "bundle": str(result.bundle or "")}
        rerun = shell_line(["pytest", request.node.nodeid])
        props["replay"] = harness_command("replay", result.bundle) if result.bundle else rerun
        for key, value in props.items():
            record_property(key, value)
        if result.verdict != "exactly-once":
            pytest.fail(result.render(), pytrace=False)


class SinkConformance:
    """Base class for a sink's conformance tests (set ``sink`` and ``read_back``; see the module docstring)."""

    sink: Any = None
    read_back: Any = None
    guarantee = "exactly-once"

    @pytest.fixture(scope="class")
    @classmethod
    def conformance_report(
        cls, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[ConformanceReport]:
        from harness.conformance.sink.scenario import SINK_POINTS
        from harness.conformance.sink.steps import DEFAULT_STEPS
        from harness.conformance.sink.suite import check_sink

        sink, read_back = _attr(cls, "sink"), _attr(cls, "read_back")
        if sink is None or read_back is None:
            pytest.fail(f"{cls.__name__}: set the class attributes 'sink' and 'read_back'", pytrace=False)
        yield shared_report(
            request,
            tmp_path_factory,
            lambda workdir: check_sink(
                sink,
                read_back,
                _attr(cls, "options", {}),
                guarantee=_attr(cls, "guarantee", "exactly-once"),
                faults=_attr(cls, "faults", "mixed"),
                points=_attr(cls, "points", SINK_POINTS),
                workdir=workdir,
                skip=_attr(cls, "skip", ()),
                crash_points=_attr(cls, "crash_points", True),
                steps=_attr(cls, "steps", DEFAULT_STEPS),
                wrappers=_attr(cls, "wrappers", ()),
                seed=_attr(cls, "seed", SINK_SEED),
                echo=lambda m: None,
            ),
        )

    @pytest.mark.parametrize("check_id", SINK_CHECK_IDS)
    def test_check(
        self,
        conformance_report: ConformanceReport,
        check_id: str,
        record_property: Callable[[str, object], None],
        request: pytest.FixtureRequest,
    ) -> None:
        seed = _attr(type(self), "seed", SINK_SEED)
        kit_check(record_property, request.node.nodeid, conformance_report, check_id, seed)
