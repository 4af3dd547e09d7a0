"""The commands the README and ``docs/`` mark ```` ```bash runnable spark ````, each run as shown (heavy
tier: each starts Spark drivers; the Spark-free ones run in ``tests/unit/test_docs.py``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from harness.spark.procs import TOKEN_PREFIX_ENV
from tests.doc_commands import Command, commands
from tests.integration import clirun
from tests.integration.clirun import TOKEN_PREFIX, leftover_processes

SPARK = [c for c in commands() if c.spark]


@pytest.mark.heavy
@pytest.mark.parametrize("command", SPARK, ids=[c.id for c in SPARK])
def test_spark_runnable_command(command: Command) -> None:
    env = {**os.environ, TOKEN_PREFIX_ENV: TOKEN_PREFIX, "NO_COLOR": "1",
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}  # fmt: skip
    if clirun.CHILD_TMPDIR is not None:
        env["TMPDIR"] = str(clirun.CHILD_TMPDIR)
    proc = command.run(timeout=900, env=env)
    shown = f"{command.id}: {command.text}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode == command.exit_code, shown
    if command.first_output_line is not None:
        assert proc.stdout.splitlines()[0] == command.first_output_line, shown
    assert leftover_processes() == []
