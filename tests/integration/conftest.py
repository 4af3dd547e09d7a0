"""Integration-test fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration import clirun


@pytest.fixture(scope="session", autouse=True)
def cli_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point the ``TMPDIR`` of CLI runs (:func:`tests.integration.clirun.harness`) at a
    directory in pytest's tmp dir, so runs without ``--run-dir`` leave nothing in ``/tmp``.
    Session-scoped, so it is in place before module-scoped fixtures run the CLI too."""
    clirun.CHILD_TMPDIR = tmp_path_factory.mktemp("cli-tmp")
    yield
    clirun.CHILD_TMPDIR = None
