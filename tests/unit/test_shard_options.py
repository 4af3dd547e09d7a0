"""The pytest options of sharded campaigns reach every ``chaos_run``: ``--harness-shard I/N`` picks the shard's
blocks (a shard with none skips, saying why), it needs a seed every shard shares, a source campaign runs whole in
shard 1 only, and a bad
``--harness-shard`` or ``--harness-database`` is a usage error naming what to give. No Spark is started: each
campaign here stops before its first example."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

USER_TESTS = """
import pytest


@pytest.mark.chaos(scenario="file_sink_stateless", examples=5, seed=3)
def test_idle_shard(chaos_run):
    chaos_run()
    raise AssertionError("an idle shard must skip before any campaign runs")


@pytest.mark.chaos(scenario="file_sink_stateless", examples=25)
def test_no_seed(chaos_run):
    chaos_run()
    raise AssertionError("a shard without a shared seed must not run")


@pytest.mark.chaos(source="examples/connectors/jsonl_source.py:JsonlSource", context="x.py:f")
def test_source(chaos_run):
    chaos_run()
    raise AssertionError("shard 2/2 must not run a source campaign")
"""


def test_the_shard_option_reaches_chaos_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest("-p", "no:cacheprovider", "--harness-shard", "2/2", "-rs")
    result.assert_outcomes(failed=1, skipped=2)
    for line in (
        "*shard 2/2 has no examples: a campaign of 5 example(s) is 1 block(s)*give --examples 20 or more*",
        "*a campaign over a source is not split into shards: shard 1/2 runs it whole*",
        "*--harness-shard 2/2 needs a seed every shard shares: give --harness-seed N*",
    ):
        result.stdout.fnmatch_lines([line])


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
