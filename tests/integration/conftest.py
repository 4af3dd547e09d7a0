"""Integration-test fixtures."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from harness.engine.pool import DriverPool
from harness.spark.session import DEFAULT_MASTER
from tests.integration import clirun


@pytest.fixture(scope="session", autouse=True)
def cli_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point the ``TMPDIR`` of CLI runs (:func:`tests.integration.clirun.harness`) at a
    directory in pytest's tmp dir, so runs without ``--run-dir`` leave nothing in ``/tmp``.
    Session-scoped, so it is in place before module-scoped fixtures run the CLI too."""
    clirun.CHILD_TMPDIR = tmp_path_factory.mktemp("cli-tmp")
    yield
    clirun.CHILD_TMPDIR = None


@pytest.fixture(scope="session")
def pool(_harness_pools: Callable[[str], DriverPool]) -> DriverPool:
    """The session's driver pool on ``local[2]`` (a live driver and a ready standby), lent to the tests that run
    schedules on a pool: the one the plugin's ``chaos_run`` campaigns share, so a module's first run finds a live
    driver instead of starting a pool of its own (a driver, a standby and their close: 10-15 s a module here).
    The plugin closes it at the end of the session, every process of its token killed. Its token is not under
    :data:`clirun.TOKEN_PREFIX`, so :func:`clirun.leftover_processes` counts only what CLI runs left behind. A
    module whose drivers need an environment variable set by one of its fixtures (a Kafka broker's address)
    starts a ``pool`` of its own."""
    shared = _harness_pools(DEFAULT_MASTER)
    assert not shared.token.startswith(clirun.TOKEN_PREFIX), "the session pool was made under a CLI token prefix"
    return shared
