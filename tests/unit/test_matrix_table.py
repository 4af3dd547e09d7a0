"""The support matrix's tables (tests/matrix_table.py), and the README's matrix being the one ``bin/test-matrix``
writes for today's cells and releases."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.matrix import CELLS, RELEASES
from tests.matrix_table import END, START, full, parse_block, parse_full, readme_block, replace_block, short

pytestmark = pytest.mark.unit
README = Path(__file__).resolve().parents[2] / "README.md"


def test_a_cell_says_held_caught_failed_or_refused_and_flags_the_unexpected() -> None:
    held = "exit 0: exactly-once held (scenario=file_sink_stateless, seed=1, 5 batches)"
    assert short(held, True, 17.2) == "held, 17 s"
    caught = "exit 1: exactly-once violated: 53 duplicate (scenario=foreachbatch_append_naive, seed=1)"
    assert short(caught, True, 20) == "caught: 53 duplicate, 20 s"
    failed = "exit 1: recovery failed: java.lang.NullPointerException in KafkaMicroBatchStream (scenario=x)"
    assert short(failed, True, 9).startswith("recovery failed: java.lang.NullPointerException")
    real = "exit 1: recovery failed (scenario=kafka_file_sink, seed=1): restarted from its checkpoint after fault #14"
    assert short(real, True, 9) == "recovery failed: restarted from its checkpoint after fault #14, 9 s"
    refused = (
        "exit 2: harness: scenario kafka_file_sink cannot run here: jar set 'kafka-connector' cannot be had for "
        "PySpark 4.3.0: spark-sql-kafka-0-10_2.13:4.3.0 is not served by https://repo1.maven.org/maven2/ (log: /a/b.log)"  # noqa: E501
    )
    assert short(refused, True, 1) == (
        "refused: jar set 'kafka-connector' cannot be had for PySpark 4.3.0: spark-sql-kafka-0-10_2.13:4.3.0 is not "
        "served by https://repo1.maven.org/maven2/ (log: b.log)"
    )  # the subject and a path's directories go, a URL stays
    assert short("exit 1: 3 failed, 1004 passed in 33.27s", True, 34) == "3 failed, 1004 passed in 33.27s, 34 s"
    assert short("exit 0: " + "x" * 300, True, 0) == "x" * 109 + "…"
    path = "exit 2: harness: source '/work/main/examples/connectors/jsonl_source.py:JsonlSource': cannot import it"
    assert short(path, True, 1) == "refused: source 'jsonl_source.py:JsonlSource': cannot import it"
    conforms = "exit 0: source conforms (11 pass, 2 skip; examples.connectors.jsonl_source:JsonlSource)"
    assert short(conforms, True, 20) == "source conforms (11 pass, 2 skip), 20 s"
    assert short(held, False, 17).startswith("UNEXPECTED (held")  # a hold where a catch was due is flagged
    assert short("exit 0: a | b", True, 0) == "a / b"  # a pipe would split the table's row


def test_the_block_is_replaced_in_place_and_reads_back() -> None:
    results = {
        "4.0.5": [("set-up", "exit 0: ok", True, 0.0), ("kills", "exit 0: exactly-once held (scenario=a)", True, 3)],
        "4.3.0": [("set-up", "exit 0: ok", True, 0.0), ("kills", "exit 2: harness: no", True, 1)],
    }
    block = readme_block(("4.0.5", "4.3.0"), results, "Measured today.", {("4.0.5", "kills"): "a reported bug: x"})
    readme = f"# t\n\nbefore\n\n{START}\nold\n{END}\n\nafter\n"
    new = replace_block(readme, block)
    assert new.startswith("# t\n\nbefore\n\n") and new.endswith("\n\nafter\n") and "old" not in new
    assert "| kills | held, 3 s; a reported bug: x | refused: no |" in new
    assert parse_block(new) == (["4.0.5", "4.3.0"], ["set-up", "kills"])
    with pytest.raises(ValueError, match=r"support matrix block: the markers .* must each be there once"):
        replace_block("# t\n", block)
    with pytest.raises(ValueError, match="must each be there once"):  # a marker quoted in prose: nothing written
        replace_block(readme.replace("before", START), block)


def test_the_full_table_reads_back_as_it_was_measured() -> None:
    results = {
        "4.1.4": [("set-up", "exit 0: done", True, 0.0), ("kafka", "exit 1: recovery failed: NPE (x)", True, 12.0)],
        "4.3.0": [("set-up", "exit 0: done", True, 0.0), ("kafka", "exit 0: exactly-once held (s=1)", False, 7.0)],
    }
    text = f"Measured today.\n\n{full(('4.1.4', '4.3.0'), results)}\n"
    assert parse_full(text) == ("Measured today.", ["4.1.4", "4.3.0"], results)
    with pytest.raises(ValueError, match="run bin/test-matrix"):
        parse_full("nothing\n")


def test_the_readmes_matrix_has_every_cell_on_every_release_bin_test_matrix_measures() -> None:
    releases, rows = parse_block(README.read_text())
    stale = "README's support matrix is not today's cells and releases: run bin/test-matrix"
    assert releases == list(RELEASES), stale
    assert rows == ["set-up", *(cell.name for cell in CELLS), "unit tier"], stale


def test_a_catalogued_bug_is_expected_only_on_its_release_and_under_its_conditions() -> None:
    from tests.matrix import expected, finding_for

    by_name = {cell.name: cell for cell in CELLS}
    # SPARK-55271 needs nothing but a kill: the Kafka cell and its twin fail on 4.1.4 and are expected to.
    assert finding_for(by_name["Kafka source"], "4.1.4") == "spark-55271"
    assert finding_for(by_name["Kafka source, broken twin caught"], "4.1.4") == "spark-55271"
    assert expected(by_name["Kafka source"], "4.1.4", set()) == 1
    assert expected(by_name["Kafka source"], "4.2.0", set()) == 0
    # SPARK-53560 (4.0.5) needs available-now jobs and a partition added; the fresh-checkpoint findings (4.2.0)
    # a checkpoint reset: the plain cells of their pipelines must hold there.
    assert finding_for(by_name["Kafka source"], "4.0.5") is None
    assert finding_for(by_name["kills: file sink"], "4.2.0") is None
    assert expected(by_name["kills: file sink"], "4.2.0", set()) == 0
    # A jar set the registries do not serve, or a Python API newer than the release: a refusal.
    assert expected(by_name["Kafka source"], "4.3.0", {"kafka-connector"}) == 2
    assert expected(by_name["Python source checks"], "4.1.4", set()) == 2


def test_an_environment_is_built_again_only_when_its_dependencies_change() -> None:
    from tests.matrix_env import _deps_key, plan

    assert len({_deps_key("4.3.0", ""), _deps_key("4.2.0", ""), _deps_key("4.2.0", "delta")}) == 3
    deps = _deps_key("4.3.0", "")
    assert plan(f"abc+1 {deps}", "abc+1", deps, True) == "keep"
    assert plan(f"abc+1 {deps}", "def+1", deps, True) == "wheel"  # another commit or edit: the wheel alone
    assert plan(f"abc+1 {deps}", "abc+2", deps, True) == "wheel"
    assert plan(f"abc+1 {deps}", "abc+1", "other", True) == "full"  # new dependencies
    assert plan("abc", "abc", deps, True) == "full"  # the one-field stamp of before
    assert plan("", "abc+1", deps, True) == "full"
    assert plan(f"abc+1 {deps}", "abc+1", deps, False) == "full"  # no interpreter: a half-built environment
