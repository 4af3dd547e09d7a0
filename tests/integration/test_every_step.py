"""Heavy tier (``bin/test-heavy``): the reference sinks pass ``crash-anywhere`` with a fault after *every*
step of a census batch (``--every-step``: effect-free steps too, not only the effect boundaries), PostgreSQL
against a real server. The default suite samples a few steps of the SQLite
upsert (``test_conformance_cli.py``); the measured step counts and times are in docs/fault-injection.md.

The faults are exceptions raised just after the step (``--faults soft``: the query restarts in the same
driver, about 2 s a step). ``HARNESS_EVERY_STEP_FAULTS=hard`` SIGKILLs the driver's process groups after
every step instead: a new driver each, about 12 s a step here, so 146 steps of the file sink take 30 min."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from scenarios.base import ResourceUnavailable
from scenarios.sinks.pg_cluster import throwaway_postgres
from tests.ci_skips import missing
from tests.integration.clirun import harness_json, leftover_processes

pytestmark = pytest.mark.heavy
#: Every sink check but crash-anywhere (they have their own tests).
OTHERS = "write-invisible-until-commit,idempotent-commit,keys-on-batch-id,abort-cleans-up,task-retry,crash-points"
SINKS = {
    "transactional-files": ("scenarios/sinks/transactional.py:TransactionalFileSink", "read_visible"),
    "sqlite-upsert": ("scenarios/sinks/sqlite_upsert.py:upsert_into_sqlite", "read_sqlite"),
    "postgres-upsert": ("scenarios/sinks/postgres_upsert.py:postgres_sink_at", "read_postgres_at"),
}


@pytest.fixture
def options(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    with contextlib.ExitStack() as stack:
        if request.node.callspec.id == "postgres-upsert":
            try:
                settings = stack.enter_context(throwaway_postgres(tmp_path / "pg"))
            except ResourceUnavailable as exc:
                pytest.skip(missing(f"PostgreSQL unavailable here: {exc}"))
            yield ["--option", f"dsn={settings['dsn']}"]
        else:
            yield []


@pytest.mark.parametrize("name", list(SINKS))
def test_reference_sink_survives_a_kill_after_every_step(name: str, options: list[str], tmp_path: Path) -> None:
    target, read_back = SINKS[name]
    module = target.split(":")[0]
    t0 = time.monotonic()
    rc, doc, log = harness_json(
        tmp_path / "r.json",
        "check-sink",
        target,
        "--read-back",
        f"{module}:{read_back}",
        "--faults",
        os.environ.get("HARNESS_EVERY_STEP_FAULTS", "soft"),
        "--steps",
        "all",
        "--every-step",
        "--skip",
        OTHERS,
        *options,
    )
    check = next(c for c in doc.get("checks", []) if c["id"] == "crash-anywhere")
    steps = doc["steps"]
    tried = len(steps["steps_tried"])
    print(
        f"{name}: {tried} of {steps['census_steps']} steps ({steps['boundaries']} effect boundaries), "
        f"{check['status']} in {time.monotonic() - t0:.0f} s"
    )
    assert check["status"] == "pass", log
    assert len(steps["steps_tried"]) == steps["census_steps"] >= 5, steps
    assert rc == 0, log
    assert leftover_processes() == []
