"""The pytest options of sharded campaigns reach every ``chaos_run``: ``--harness-shard I/N`` picks the shard's
blocks (an idle shard is no verdict, said why), a source campaign runs whole in shard 1 only, and a bad
``--harness-shard`` or ``--harness-database`` is a usage error naming what to give. No Spark is started: each
campaign here stops before its first example."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = """
import pytest


@pytest.mark.chaos(scenario="file_sink_stateless", examples=5, seed=3)
def test_idle_shard(chaos_run):
    result = chaos_run()
    assert result.verdict == "unknown" and result.shard == "2/2" and result.blocks == []
    assert "give --examples 20 or more for 2 shards" in result.error
    assert result.database is None


@pytest.mark.chaos(source="examples/connectors/jsonl_source.py:JsonlSource", context="x.py:f")
def test_source(chaos_run):
    chaos_run()
    raise AssertionError("shard 2/2 must not run a source campaign")
"""


def test_the_shard_option_reaches_chaos_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--harness-shard", "2/2", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*a campaign over a source is not split into shards: shard 1/2 runs it whole*"])


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--harness-shard", "3/2", "*--harness-shard: shard 3/2: give I/N with 1 <= I <= N*"),
        ("--harness-database", "db-file", "*--database db-file: is a file; give a directory*"),
    ],
)
def test_bad_shard_options_are_usage_errors(pytester: pytest.Pytester, option: str, value: str, message: str) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    (pytester.path / "db-file").write_text("x")
    result = pytester.runpytest("-p", "no:cacheprovider", option, value, "-k", "idle")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
